"""How OpsAgent logs: structlog lines on stderr, JSON for the server, text for a person, secrets masked.

Every command sets logging up through here, so every line passes the redactor before it is written.
"""

from __future__ import annotations

import sys

import structlog

from bot.telemetry.log_redaction import LogRedaction


def configure_logging(*, json: bool) -> None:
    """Logs go to stderr (stdout is the command's output): JSON lines for the server, readable text
    otherwise; lines logged inside a run carry its run id, channel, thread and user; secrets are masked."""
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
        logger_factory=_stderr_logger,
    )


def _stderr_logger(*_: object) -> structlog.PrintLogger:
    """A logger on the current stderr (looked up per use, so a replaced stderr is honoured)."""
    return structlog.PrintLogger(file=sys.stderr)
