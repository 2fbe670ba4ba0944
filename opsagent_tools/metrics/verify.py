"""Did the action hold? A `query_metrics` call run again after an approved action, and judged against the incident.

The call's query is read from its window before the action up to now, and the series that changed most before the
action is judged: **held** when its latest value is back within its range from before the change point (the
incident), **did not hold** when it is not, **inconclusive** when there is no data to tell (the query failed, found
nothing, has no value since the action, or shows no change before it). Never held without data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import median
from typing import Any

from kernel import ToolFailure, VerificationOutcome
from opsagent_tools.metrics.client import MetricsClient
from opsagent_tools.metrics.headline import sparkline
from opsagent_tools.metrics.series import (
    NOISE_MULTIPLE,
    RELATIVE_FLOOR,
    Series,
    describe_change,
    format_value,
    noise_of,
)
from opsagent_tools.metrics.settings import MetricsSettings
from opsagent_tools.metrics.tools import (
    DEFAULT_METRIC,
    DEFAULT_WINDOW,
    MAX_POINTS_PER_SERIES,
    resolve_metric,
    step_seconds,
)
from opsagent_tools.time_words import window_seconds

POINTS_SINCE = 4
"""The re-read has about this many points after the action (each at least a second apart), at most the call's own
step apart: enough for "now" to be a value read after the action, however soon the check comes."""
METRIC_CHARS = 80
"""Raw PromQL is named by its text, cut to this."""


@dataclass(frozen=True)
class SymptomCheck:
    """What a re-read of the symptom found: the outcome, the metric, its value when the action ran (`before`) and
    at the check (`now`), its range before the incident (`baseline`, low and high), its series as a sparkline, and
    why, when inconclusive (`detail`). Values are in the metric's `unit` (see `value`)."""

    outcome: VerificationOutcome
    metric: str
    unit: str | None = None
    before: float | None = None
    now: float | None = None
    baseline: tuple[float, float] | None = None
    sparkline: str = ""
    detail: str = ""

    def value(self, value: float | None) -> str:
        """A value as people read it in this metric's unit ("12.0%", "230ms"); "" for none."""
        return "" if value is None else format_value(value, self.unit)

    @property
    def baseline_range(self) -> str:
        """The range before the incident in words: "0.10%–0.12%", or one value when both ends read the same."""
        if self.baseline is None:
            return ""
        low, high = (self.value(end) for end in self.baseline)
        return low if low == high else f"{low}–{high}"


async def recheck_symptom(
    client: MetricsClient, settings: MetricsSettings, args: Mapping[str, Any], *, action_at: datetime, now: datetime
) -> SymptomCheck:
    """Run the query of a `query_metrics` call (its `args`) again, from its window before `action_at` to `now`,
    and judge it (`judge`). Never raises: a query that fails is an inconclusive check that says why."""
    metric = _cut(" ".join(str(args.get("metric") or DEFAULT_METRIC).split()))
    try:
        service = args.get("service")
        if not isinstance(service, str) or not service.strip():
            return _inconclusive(metric, None, "the read named no service")
        window_s = window_seconds(str(args.get("window") or DEFAULT_WINDOW))
        step = args.get("step")
        asked_step_s = step_seconds(window_s, f"{step}s" if isinstance(step, int) else step)
        since_s = max((now - action_at).total_seconds(), 0.0)
        span_s = window_s + since_s
        fine_s = min(asked_step_s, since_s / POINTS_SINCE)
        step_s = float(max(1, math.ceil(max(span_s / MAX_POINTS_PER_SERIES, fine_s))))
        start = now - timedelta(seconds=math.ceil(span_s / step_s) * step_s)  # so that `now` is a point of the grid
        name, promql, unit = resolve_metric(settings, metric, service, step_s=step_s, window_s=window_s)
        metric = name if name != "PromQL" else _cut(" ".join(promql.split()))
        found = await client.query_range(promql, start, now, step_s)
    except ToolFailure as failure:
        return _inconclusive(metric, None, f"the query failed: {failure}")
    except Exception as exc:  # a backend's own error: the check says so rather than fail the duty
        return _inconclusive(metric, None, f"the query failed ({type(exc).__name__}: {str(exc)[:200]})")
    return judge(metric, unit, found, action_at=action_at.timestamp(), now=now.timestamp() - step_s / 2)


def judge(metric: str, unit: str | None, found: Sequence[Series], *, action_at: float, now: float) -> SymptomCheck:
    """The outcome of a re-read (pure): of the series whose change before `action_at` is largest, whether its value
    now (a sample at `now` or later: a series that stopped, or is NaN now, tells nothing) is back within its range
    from before that change, widened by its noise and by a tenth of the incident's size (so a value that came 90% of
    the way back holds; one still near the incident's level does not)."""
    judged = []
    for series in found:
        finite = [(t, v) for t, v in series.points if math.isfinite(v)]
        before = [(t, v) for t, v in finite if t <= action_at]
        judged.append((describe_change(before, action_at, unit), finite, before))
    if not any(finite for _, finite, _ in judged):
        return _inconclusive(metric, unit, "no data: the query found no values")
    change, finite, before = max(judged, key=lambda entry: (entry[0].size, len(entry[1])))
    bars = sparkline(finite)
    since = [(t, v) for t, v in finite if t > action_at]
    if not before or not since:
        missing = "before the action" if not before else "since the action"
        return _inconclusive(metric, unit, f"no data {missing}", bars)
    if since[-1][0] < now:
        return _inconclusive(metric, unit, "no data now: the series stopped after the action", bars)
    if change.began is None:
        return _inconclusive(metric, unit, f"no change before the action to compare with ({change.brief})", bars)
    normal = [v for t, v in before if t < change.began]
    if len(normal) < 2:
        return _inconclusive(metric, unit, "too little data from before the incident to know its normal range", bars)
    at_action, latest = before[-1][1], since[-1][1]
    low, high = min(normal), max(normal)
    noise = NOISE_MULTIPLE * noise_of(normal) if len(normal) > 2 else 0.0
    slack = max(noise, RELATIVE_FLOOR * abs(at_action - median(normal)))
    held = low - slack <= latest <= high + slack
    outcome = VerificationOutcome.HELD if held else VerificationOutcome.DID_NOT_HOLD
    return SymptomCheck(outcome, metric, unit, at_action, latest, (low, high), bars)


def _inconclusive(metric: str, unit: str | None, why: str, bars: str = "") -> SymptomCheck:
    return SymptomCheck(VerificationOutcome.INCONCLUSIVE, metric, unit, sparkline=bars, detail=why)


def _cut(text: str) -> str:
    return text if len(text) <= METRIC_CHARS else text[: METRIC_CHARS - 1] + "…"
