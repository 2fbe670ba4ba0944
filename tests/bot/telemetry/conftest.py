"""Fixtures of the telemetry tests: `logging_as_configured`, the CLI's logging set-up for one test."""

from __future__ import annotations

import logging

import pytest
import structlog

from bot.telemetry.log_setup import configure_logging


@pytest.fixture
def logging_as_configured():
    """The CLI's logging for the test, and whatever was configured before (structlog's, the standard library's
    root logger) restored after it."""
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield configure_logging
    structlog.configure(**saved)
    root.handlers[:] = handlers
    root.setLevel(level)
