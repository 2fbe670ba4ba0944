"""How OpsAgent logs: structlog lines on stderr, JSON for the server, text for a person, secrets masked.

Every command sets logging up through here, so every line passes the redactor before it is written: OpsAgent's
own, and those of the libraries that log through the standard library (aiohttp, slack_bolt, asyncio…).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from bot.telemetry.log_redaction import LogRedaction

LIBRARY_LEVEL = logging.WARNING
"""The least a library's standard-library log line must be to be written (aiohttp's access log is INFO)."""


def configure_logging(*, json: bool) -> None:
    """Logs go to stderr (stdout is the command's output): JSON lines for the server, readable text
    otherwise; lines logged inside a run carry its run id, channel, thread and user; secrets are masked.

    The root logger of the standard library gets one handler that renders through the same processors, so a
    library's line (an aiohttp traceback, a Bolt error) is redacted and shaped like ours, never written raw."""
    renderer = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    finish: list[Any] = [structlog.processors.format_exc_info, LogRedaction(), renderer]
    structlog.configure(processors=[*shared, *finish], logger_factory=_stderr_logger)
    handler = _CurrentStderr()
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, _logger_name],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *finish],
        )
    )
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _CurrentStderr)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(LIBRARY_LEVEL)


def _stderr_logger(*_: object) -> structlog.PrintLogger:
    """A logger on the current stderr (looked up per use, so a replaced stderr is honoured)."""
    return structlog.PrintLogger(file=sys.stderr)


class _CurrentStderr(logging.Handler):
    """A standard-library handler that writes each formatted line to the current stderr, like `_stderr_logger`."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def _logger_name(_logger: Any, _method: str, event_dict: Any) -> Any:
    """A library line names the library's logger (`aiohttp.server`), as structlog names ours."""
    record = event_dict.get("_record")
    if record is not None:
        event_dict["logger"] = record.name
    return event_dict
