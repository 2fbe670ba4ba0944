"""Verification of an approved action: whether the symptom the run saw went away after the action, checked later.

The host re-runs the read that showed the symptom some time after the action ran and records what it found here, in
the run's trace: the kernel knows nothing of metrics, so the values are text for people ("12.0%", "0.10%–0.12%").
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic.dataclasses import dataclass


class VerificationOutcome(StrEnum):
    """What a check of an approved action found. Never `held` without data."""

    HELD = "held"
    """The symptom is back within its range from before the incident."""
    DID_NOT_HOLD = "did_not_hold"
    """The symptom is still outside that range: the action did not fix it (or not for long)."""
    INCONCLUSIVE = "inconclusive"
    """No data to tell: the read failed, found nothing, or showed no incident to compare with."""
    NOT_VERIFIED = "not_verified"
    """There was nothing to re-run: the run read no symptom before the action."""


@dataclass(frozen=True, slots=True)
class Verification:
    """One check of an approved side effect (`step`), made `at` a moment after it ran. `check` is 1 for the first
    check, 2 for the second one ("is it still holding?"); a check asked for by hand takes the next number."""

    step: int
    check: int
    at: datetime
    outcome: VerificationOutcome
    symptom_step: int | None = None
    """The read it re-ran (a step before the action); None when there was none (`not_verified`)."""
    metric: str = ""
    """What was re-read, as people name it ("http_5xx_rate")."""
    before: str = ""
    """Its value when the action ran."""
    now: str = ""
    """Its value at the check."""
    baseline: str = ""
    """Its range before the incident began ("0.10%–0.12%")."""
    sparkline: str = ""
    """The series from before the incident to the check, as bars (▁▂▃▄▅▆▇█)."""
    detail: str = ""
    """Why, in a few words, when the outcome needs it (what failed, that no data came)."""
