"""Metric series turned into the few lines a model reads: points in relative time, units, and the change point.

"jumped from 0.10% to 12.0% at t-10m" is evidence a model can use; 120 raw samples are tokens it misreads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from statistics import median
from typing import Literal

from opsagent_tools.time_words import format_span, relative_time

Point = tuple[float, float]
"""A sample: unix time in seconds, value."""

Unit = Literal["percent", "seconds", "bytes", "count", "rps", "cores"]
"""How values read: `percent` is a 0–1 ratio shown as %, `seconds` shows ms/s, `bytes` KiB/MiB/GiB."""

DEFAULT_MAX_POINTS = 32
"""Points shown per series; the default query step (window/30) stays within it, so nothing is merged."""

NOISE_MULTIPLE = 4.0
"""A change counts when it exceeds this many times the point-to-point noise …"""
RELATIVE_FLOOR = 0.1
"""… and a tenth of the larger of the two levels (so 100.0 → 100.4 is flat, 0 → 0.05% is not)."""


@dataclass(frozen=True)
class Series:
    """One time series: its labels and its samples in time order."""

    labels: dict[str, str]
    points: list[Point] = field(default_factory=list)


@dataclass(frozen=True)
class Change:
    """What a series did in the window: a kind, a one-line description, and the absolute size for ranking."""

    kind: Literal["no_data", "too_few", "flat", "jump", "drop", "rise", "fall", "spike", "dip"]
    text: str
    size: float = 0.0
    brief: str = ""
    """The same in a few words for people: "0.10% → 12.0% at t-10m", "flat at 0.10%"."""
    began: float | None = None
    """When the change began: the time of its first sample off the earlier level (the samples before it are the
    series' level before the change); None when nothing changed (or there is too little to tell)."""


# --- values and times -------------------------------------------------------------------------


def format_value(value: float, unit: str | None = None) -> str:
    """A value as a person writes it, compactly (no spaces, so "t-5m:230ms" stays one token pair):
    0.1 with unit percent is "10.0%", 0.23 seconds "230ms", 3e8 bytes "286MiB", 0.5 cores "0.5cores"."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if unit == "percent":
        return _percent(value * 100)
    if unit == "seconds":
        return _seconds(value)
    if unit == "bytes":
        return _bytes(value)
    if unit == "rps":
        return f"{_number(value)}req/s"
    if unit == "cores":
        return f"{_number(value)}cores"
    return _number(value)


def _percent(p: float) -> str:
    size = abs(p)
    if size == 0:
        return "0%"
    if size < 0.01:
        return f"{p:.2g}%"
    if size < 1:
        return f"{p:.2f}%"
    return f"{p:.1f}%" if size < 100 else f"{p:.0f}%"


def _seconds(s: float) -> str:
    size = abs(s)
    if size == 0:
        return "0s"
    if size < 1e-3:
        return f"{_sig3(s * 1e6)}µs"
    if size < 1:
        return f"{_sig3(s * 1e3)}ms"
    return f"{_sig3(s)}s" if size < 600 else f"{_sig3(s / 60)}min"


def _bytes(b: float) -> str:
    for power, name in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if abs(b) >= 1024**power:
            return f"{_sig3(b / 1024**power)}{name}"
    return f"{_number(b)}B"


def _number(v: float) -> str:
    size = abs(v)
    if size >= 1e15:
        return f"{v:.3g}"
    if size >= 1e4:
        for threshold, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if size >= threshold:
                return f"{_sig3(v / threshold)}{suffix}"
    if v == int(v):
        return str(int(v))
    return _sig3(v)


def _sig3(v: float) -> str:
    """About three significant digits, never in exponent notation for everyday magnitudes."""
    size = abs(v)
    if size >= 99.95:  # thresholds after rounding, so 99.96 reads "100", not "100.0"
        return f"{v:.0f}"
    if size >= 9.995:
        return f"{v:.1f}"
    if size >= 0.9995 or size == 0:
        return f"{v:.2f}"
    return f"{v:.2g}"


# --- downsampling -----------------------------------------------------------------------------


def downsample(points: Sequence[Point], max_points: int = DEFAULT_MAX_POINTS) -> list[Point]:
    """At most `max_points` samples in time order, one per equal bucket: the one furthest from the median.

    Spikes and dips survive (a mean would dilute them); the last sample is always kept, since it is "now".
    """
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    if len(points) <= max_points:
        return list(points)
    finite = [v for _, v in points if math.isfinite(v)]
    centre = median(finite) if finite else 0.0
    chosen: list[Point] = []
    for bucket in range(max_points):
        lo = bucket * len(points) // max_points
        hi = (bucket + 1) * len(points) // max_points
        members = points[lo:hi]
        candidates = [p for p in members if math.isfinite(p[1])] or list(members)
        chosen.append(max(candidates, key=lambda p: abs(p[1] - centre) if math.isfinite(p[1]) else 0.0))
    chosen[-1] = points[-1]
    return chosen


def render_points(
    points: Sequence[Point], now: float, unit: str | None = None, max_points: int = DEFAULT_MAX_POINTS
) -> str:
    """The series as "t-30m:0.10% t-29m:0.09% … now:12.0%", downsampled to at most `max_points` samples."""
    return " ".join(f"{relative_time(t, now)}:{format_value(v, unit)}" for t, v in downsample(points, max_points))


# --- change points ----------------------------------------------------------------------------


def describe_change(points: Sequence[Point], now: float, unit: str | None = None) -> Change:
    """One line on what the series did: a jump or drop (and when), a gradual rise or fall, a brief spike, or flat.

    Robust and simple: levels are medians, noise is the median absolute point-to-point difference, and a change
    must exceed both several times the noise and a tenth of the level. NaN and ±Inf samples are ignored.
    """
    if not points:
        return Change("no_data", "no data in the window", brief="no data")
    finite = [(t, v) for t, v in points if math.isfinite(v)]
    if not finite:
        return Change(
            "no_data",
            f"no finite values: all {len(points)} points are NaN or ±Inf (a ratio is NaN when nothing was counted)",
            brief="no finite values (NaN)",
        )
    times = [t for t, _ in finite]
    values = [v for _, v in finite]
    fmt = _Formatter(unit, now)
    if len(values) < 5:
        if len(values) == 1:
            one = f"{fmt.value(values[0])} at {fmt.time(times[0])}"
            return Change("too_few", f"one point only: {one}", brief=f"one point: {one}")
        return Change(
            "too_few",
            f"only {len(values)} points: {fmt.value(values[0])} at {fmt.time(times[0])}, "
            f"{fmt.value(values[-1])} at {fmt.time(times[-1])}",
            brief=f"{len(values)} points: {fmt.value(values[0])} → {fmt.value(values[-1])}",
        )
    noise = noise_of(values)
    edge = max(1, min(len(values) // 10, 5))
    start, end = median(values[:edge]), median(values[-edge:])
    if not _significant(end - start, noise, start, end):
        return _excursion(times, values, noise, fmt)
    return _level_change(times, values, start, end, noise, fmt)


def _level_change(
    times: list[float], values: list[float], start: float, end: float, noise: float, fmt: _Formatter
) -> Change:
    """The series ends at another level than it began: a step if one short move carries much of the change
    (the rest may follow: "jumped from 0.10% to 4.2% at t-10m, now 12.0%"), otherwise a drift."""
    smooth = _median3(values)
    last = values[-1]
    jump = _largest_jump(smooth, end - start, noise)
    if jump is not None:
        lo, hi = jump
        before, after = median(values[:lo]), smooth[hi]
        kind: Literal["jump", "drop"] = "jump" if end > start else "drop"
        verb = "jumped" if kind == "jump" else "dropped"
        text = f"{verb} from {fmt.value(before)} to {fmt.value(after)} {fmt.at(times[lo])}"
        brief = f"{fmt.value(before)} → {fmt.value(after)} {fmt.at(times[lo])}{fmt.now_suffix(after, last)}"
        return Change(kind, text + fmt.now_suffix(after, last), abs(end - start), brief, times[lo])
    middle = _best_split(smooth)
    progress = [(s - start) / (end - start) for s in smooth]
    began = next((i for i in range(middle - 1, -1, -1) if progress[i] <= 0.05), 0)
    reached = next((i for i in range(middle, len(values)) if progress[i] >= 0.95), len(values) - 1)
    trend: Literal["rise", "fall"] = "rise" if end > start else "fall"
    verb = "rose" if trend == "rise" else "fell"
    over = format_span(times[reached] - times[began])
    text = (
        f"{verb} gradually from {fmt.value(start)} to {fmt.value(end)} over {over}"
        f" ({fmt.time(times[began])} to {fmt.time(times[reached])})"
    )
    brief = f"{verb} {fmt.value(start)} → {fmt.value(end)} over {over}{fmt.now_suffix(end, last)}"
    return Change(trend, text + fmt.now_suffix(end, last), abs(end - start), brief, times[min(began + 1, reached)])


def _largest_jump(smooth: list[float], total: float, noise: float) -> tuple[int, int] | None:
    """The biggest move in the direction of `total`, grown over neighbouring moves at least a quarter its size:
    (first, last) index of the points it reaches, or None when that move is too spread out, or too small against
    the change or the noise, to be a step (a drift is many similar small moves)."""
    sign = 1.0 if total > 0 else -1.0
    moves = [sign * (b - a) for a, b in pairwise(smooth)]
    biggest = max(range(len(moves)), key=moves.__getitem__)
    if not moves[biggest] > 0:
        return None
    lo = hi = biggest
    while lo > 0 and moves[lo - 1] >= 0.25 * moves[biggest]:
        lo -= 1
    while hi < len(moves) - 1 and moves[hi + 1] >= 0.25 * moves[biggest]:
        hi += 1
    spread = hi - lo + 1
    size = sign * (smooth[hi + 1] - smooth[lo])
    if spread > max(2, round(0.1 * len(smooth))) or not size >= max(0.3 * abs(total), NOISE_MULTIPLE * noise):
        return None
    return lo + 1, hi + 1


def _excursion(times: list[float], values: list[float], noise: float, fmt: _Formatter) -> Change:
    """Same level at both ends: either flat, or a brief spike or dip (or a change in the very last points)."""
    centre = median(values)
    peak = max(range(len(values)), key=lambda i: abs(values[i] - centre))
    deviation = values[peak] - centre
    if not _significant(deviation, noise, centre, values[peak]):
        return Change(
            "flat", f"flat at about {fmt.value(centre)}; no change point", brief=f"flat at {fmt.value(centre)}"
        )
    lo = hi = peak
    same_side = [(v - centre) * deviation >= 0.5 * deviation * deviation for v in values]
    while lo > 0 and same_side[lo - 1]:
        lo -= 1
    while hi < len(values) - 1 and same_side[hi + 1]:
        hi += 1
    if hi == len(values) - 1:
        level = median(values[lo:])
        verb = "jumped" if deviation > 0 else "dropped"
        text = f"{verb} from {fmt.value(centre)} to {fmt.value(level)} {fmt.at(times[lo])}"
        brief = f"{fmt.value(centre)} → {fmt.value(level)} {fmt.at(times[lo])}{fmt.now_suffix(level, values[-1])}"
        jumped: Literal["jump", "drop"] = "jump" if deviation > 0 else "drop"
        return Change(jumped, text + fmt.now_suffix(level, values[-1]), abs(deviation), brief, times[lo])
    kind: Literal["spike", "dip"] = "spike" if deviation > 0 else "dip"
    lasted = fmt.at(times[peak]) if lo == hi else f"({fmt.time(times[lo])} to {fmt.time(times[hi])})"
    text = f"brief {kind} to {fmt.value(values[peak])} {lasted}, otherwise about {fmt.value(centre)}"
    brief = f"{kind} to {fmt.value(values[peak])} {lasted}, else {fmt.value(centre)}"
    return Change(kind, text, abs(deviation), brief, times[lo])


def _significant(delta: float, noise: float, a: float, b: float) -> bool:
    return abs(delta) > max(NOISE_MULTIPLE * noise, RELATIVE_FLOOR * max(abs(a), abs(b)), 1e-12)


def noise_of(values: Sequence[float]) -> float:
    """Robust point-to-point noise: scaled median absolute deviation of first differences (steps and trends
    barely move it)."""
    diffs = [b - a for a, b in pairwise(values)]
    centre = median(diffs)
    return 1.4826 * median(abs(d - centre) for d in diffs) / math.sqrt(2)


def _best_split(smooth: list[float]) -> int:
    """The index where the (median-smoothed) series splits into two parts whose means differ most, weighted by
    segment size: the CUSUM statistic, which peaks at a step and at the middle of a drift."""
    n = len(smooth)
    prefix = [0.0]
    for v in smooth:
        prefix.append(prefix[-1] + v)

    def score(k: int) -> float:
        before, after = prefix[k] / k, (prefix[n] - prefix[k]) / (n - k)
        return abs(after - before) * math.sqrt(k * (n - k) / n)

    return max(range(1, n), key=score)


def _median3(values: list[float]) -> list[float]:
    """A running median of three: removes lone outliers and keeps steps sharp."""
    inner = [median(values[i - 1 : i + 2]) for i in range(1, len(values) - 1)]
    return [values[0], *inner, values[-1]]


class _Formatter:
    def __init__(self, unit: str | None, now: float) -> None:
        self.unit, self.now = unit, now

    def value(self, v: float) -> str:
        return format_value(v, self.unit)

    def time(self, t: float) -> str:
        return relative_time(t, self.now)

    def at(self, t: float) -> str:
        """ "at t-10m", or "in the last sample" for a change at the very end."""
        when = self.time(t)
        return "in the last sample" if when == "now" else f"at {when}"

    def now_suffix(self, level: float, last: float) -> str:
        """ ", now 12.0%" when the last value reads differently from the level just named."""
        return "" if self.value(level) == self.value(last) else f", now {self.value(last)}"


# --- several series ---------------------------------------------------------------------------


def format_labels(labels: dict[str, str]) -> str:
    """Labels as PromQL writes them: {pod="a",code="500"}; empty labels give ""."""
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def distinguishing_labels(series: Sequence[Series]) -> list[dict[str, str]]:
    """Each series' labels without those every series shares, which tell the series apart from nothing."""
    if len(series) < 2:
        return [{} for _ in series]
    shared = {k: v for k, v in series[0].labels.items() if all(s.labels.get(k) == v for s in series[1:])}
    return [{k: v for k, v in s.labels.items() if shared.get(k) != v} for s in series]


@dataclass(frozen=True)
class SeriesReport:
    """One series ready to show: the labels that tell it apart, its change, and its rendered points."""

    labels: dict[str, str]
    change: Change
    points: str
    samples: Sequence[Point] = ()
    """The series' own samples, for a sparkline."""


def report_series(
    series: Sequence[Series],
    now: float,
    unit: str | None = None,
    *,
    top: int = 5,
    max_points: int = DEFAULT_MAX_POINTS,
) -> tuple[list[SeriesReport], int]:
    """The `top` series with the largest change, largest first, and how many were left out."""
    named = distinguishing_labels(series)
    changes = [describe_change(s.points, now, unit) for s in series]
    order = sorted(range(len(series)), key=lambda i: (-changes[i].size, format_labels(named[i])))
    shown = [
        SeriesReport(named[i], changes[i], render_points(series[i].points, now, unit, max_points), series[i].points)
        for i in order[:top]
    ]
    return shown, len(series) - len(shown)
