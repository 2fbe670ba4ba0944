"""Fixtures of the kernel's tests: the model adapters' and the shared retry's delays, recorded, never slept."""

from __future__ import annotations

import pytest

from testkit.fakes.model_server import SleepRecorder


@pytest.fixture
def sleeps() -> SleepRecorder:
    """Records the retry delays instead of sleeping them."""
    return SleepRecorder()
