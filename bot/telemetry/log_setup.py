"""How OpsAgent logs: structlog lines on stderr (or a file), JSON for the server, text for a person, secrets masked.

Every command sets logging up through here, so every line passes the redactor before it is written: OpsAgent's
own, and those of the libraries that log through the standard library (aiohttp, slack_bolt, asyncio…); and every
warning or error passes one `RepeatLimiter`, so a flood of one event is a few lines and a count.
"""

from __future__ import annotations

import atexit
import logging
import sys
from pathlib import Path
from typing import Any, TextIO

import structlog

from bot.telemetry.log_redaction import LogRedaction
from bot.telemetry.log_repeats import RepeatLimiter

HANDLER_NAME = "opsagent"
"""Our handler on the standard library's root logger, found by name when logging is set up again."""
LIBRARY_LEVEL = logging.WARNING
"""The least a library's standard-library log line must be to be written (aiohttp's access log is INFO)."""
_repeats = RepeatLimiter()
"""The limiter of the logging set up last (its counts are written at exit)."""


def configure_logging(*, json: bool, file: Path | None = None) -> None:
    """Logs go to stderr (stdout is the command's output), or to `file`: JSON lines for the server, readable
    text otherwise; lines logged inside a run carry its run id, channel, thread and user; secrets are masked.

    The root logger of the standard library gets one handler that renders through the same processors, so a
    library's line (an aiohttp traceback, a Bolt error) is redacted and shaped like ours, never written raw.

    Past `BURST` lines of one warning or error in an interval, its lines are counted instead, and one line says how
    many were dropped when the interval is over (or at exit)."""
    global _repeats
    _write_pending_counts()  # the last set-up's, while its writer is still in place
    _repeats = RepeatLimiter()
    renderer = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    finish: list[Any] = [structlog.processors.format_exc_info, LogRedaction(), renderer]
    stream: TextIO | None = file.open("a", encoding="utf-8", buffering=1) if file is not None else None
    factory = _stderr_logger if stream is None else structlog.PrintLoggerFactory(file=stream)
    structlog.configure(processors=[_repeats, *shared, *finish], logger_factory=factory)
    handler = _CurrentStderr() if stream is None else logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, _logger_name],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *finish],
        )
    )
    handler.addFilter(_repeats)
    handler.set_name(HANDLER_NAME)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == HANDLER_NAME]:  # set up again: replace, not add
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(LIBRARY_LEVEL)
    atexit.unregister(_write_pending_counts)  # once, however often logging is set up
    atexit.register(_write_pending_counts)


def _write_pending_counts() -> None:
    _repeats.write(_repeats.pending())


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
