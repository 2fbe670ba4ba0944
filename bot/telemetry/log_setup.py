"""How OpsAgent logs: structlog lines on stderr (or a file), JSON for the server, text for a person, secrets masked.

Every command sets logging up through here, so every line passes the redactor before it is written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

import structlog

from bot.telemetry.log_redaction import LogRedaction


def configure_logging(*, json: bool, file: Path | None = None) -> None:
    """Logs go to stderr (stdout is the command's output), or to `file`: JSON lines for the server, readable
    text otherwise; lines logged inside a run carry its run id, channel, thread and user; secrets are masked."""
    renderer = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            LogRedaction(),
            renderer,
        ],
        logger_factory=_stderr_logger if file is None else _file_logger(file),
    )


def _stderr_logger(*_: object) -> structlog.PrintLogger:
    """A logger on the current stderr (looked up per use, so a replaced stderr is honoured)."""
    return structlog.PrintLogger(file=sys.stderr)


def _file_logger(path: Path) -> structlog.PrintLoggerFactory:
    """Loggers on `path`, appended to line by line (`--log-file`: a terminal view with no log lines in it)."""
    stream: TextIO = path.open("a", encoding="utf-8", buffering=1)
    return structlog.PrintLoggerFactory(file=stream)
