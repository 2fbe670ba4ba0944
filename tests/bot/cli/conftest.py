"""Fixtures of the command line's tests: the demo incident's data and an opsagent.toml that reads it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from samples.demo_config import write_demo_config


@pytest.fixture
def demo_config(tmp_path: Path) -> Path:
    """The demo incident generated under the test's directory, and the configuration file over it."""
    return write_demo_config(tmp_path, datetime.now(UTC))
