"""Fixtures of the command line's tests: the demo incident's data and an opsagent.toml that reads it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from opsagent_process import PRINTED

from samples.demo_config import write_demo_config
from testkit.model_words import model_directed


@pytest.fixture
def demo_config(tmp_path: Path) -> Path:
    """The demo incident generated under the test's directory, and the configuration file over it."""
    return write_demo_config(tmp_path, datetime.now(UTC))


@pytest.fixture(autouse=True)
def no_words_for_the_model_reach_the_terminal() -> Iterator[None]:
    """After every test: nothing `opsagent` printed speaks to the model ("tell the user", "call `finish`"), but for
    `opsagent tools list --json`, which is the model-facing specs on purpose."""
    PRINTED.clear()
    yield
    for args, printed in PRINTED:
        specs = "tools" in args and "--json" in args
        if not specs and (found := model_directed(printed)):
            pytest.fail(f"words for the model reached the terminal (opsagent {' '.join(args)}: {', '.join(found)})")
