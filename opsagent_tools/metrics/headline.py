"""A metric query's outcome in one line for people: the change in a few words and a Unicode sparkline of the series.

"http_5xx_rate 0.10% → 12.0% at t-10m ▁▁▁▁▁▁▇█████" is read at a glance in a thread; the model reads the full text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from opsagent_tools.metrics.series import RELATIVE_FLOOR, Point, SeriesReport, downsample

BARS = "▁▂▃▄▅▆▇█"
SPARK_CELLS = 12
LABELS_CHARS = 40
"""The labels that tell the top series apart, cut to this in a headline."""


def sparkline(points: Sequence[Point], cells: int = SPARK_CELLS, *, flat: bool = False) -> str:
    """The series' finite values as at most `cells` bars, one per equal stretch of time (its most extreme value, so a
    spike survives), scaled from the lowest to the highest; a range within a tenth of the level reads as flat, and
    so does every series with `flat` (its change test found only noise)."""
    finite = [(t, v) for t, v in points if math.isfinite(v)]
    if not finite:
        return ""
    values = [v for _, v in downsample(finite, cells)]
    low, high = min(values), max(values)
    span = max(high - low, RELATIVE_FLOOR * max(abs(low), abs(high)))
    if flat or span <= 0:
        return BARS[0] * len(values)
    top = len(BARS) - 1
    return "".join(BARS[min(top, round((v - low) / span * top))] for v in values)


def query_headline(name: str, shown: Sequence[SeriesReport], found: int) -> str:
    """ "http_5xx_rate 0.10% → 12.0% at t-10m ▁▁▁▇████"; for several series, the top one named by its labels, and
    how many there are. `name` is "" for raw PromQL (the call shows it)."""
    top = shown[0]
    parts = [name] if name else []
    if found > 1:
        labels = ",".join(f"{key}={value}" for key, value in sorted(top.labels.items())) or "one series"
        cut = labels if len(labels) <= LABELS_CHARS else labels[: LABELS_CHARS - 1] + "…"
        parts.append(f"{cut} (top of {found})")
    change = top.change
    parts += [change.brief or change.text, sparkline(top.samples, flat=change.kind == "flat")]
    return " ".join(part for part in parts if part)
