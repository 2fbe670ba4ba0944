"""Recorded metric series in a JSON-lines file, answered like Prometheus for plain selectors (step grid, 5m lookback).

For the offline demo and for replaying recorded incidents where no Prometheus runs: `metrics_tools(..., client=...)`.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kernel import ToolFailure
from opsagent_tools.bounded_json import load_json
from opsagent_tools.metrics.series import Point, Series
from opsagent_tools.model_regex import ModelRegex, compile_model_regex

LOOKBACK_S = 300.0
"""A grid time takes the latest sample in (t - 5m, t], as Prometheus' default lookback delta does."""
MAX_GRID_POINTS = 11000
"""Prometheus' own limit on points per series in a range query."""
UNSUPPORTED = 'the recorded-metrics backend answers plain selectors such as name{service="x"}, not PromQL functions'
ALIASES_INSTEAD = "Use a metric alias from list_metrics()."

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_OP = re.compile(r"=~|!~|!=|=")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_KEYS = frozenset({"metric", "labels", "points"})


@dataclass(frozen=True)
class _Matcher:
    """label op value, where a missing label reads as "" (so name{x!="a"} matches series without x)."""

    label: str
    op: str
    value: str
    regex: ModelRegex | None = None

    def __call__(self, labels: dict[str, str]) -> bool:
        actual = labels.get(self.label, "")
        if self.regex is not None:
            return (self.regex.fullmatch(actual) is not None) == (self.op == "=~")
        return (actual == self.value) == (self.op == "=")


def _parse_selector(promql: str) -> tuple[_Matcher, ...]:
    """`name`, `name{l="v", l2=~"re", l3!="x", l4!~"re"}` or `{__name__="name", ...}`; anything else fails."""
    text = promql.strip()
    fail = ToolFailure(f"{UNSUPPORTED} (got: {promql}).", hint=ALIASES_INSTEAD)
    matchers: list[_Matcher] = []
    name = _METRIC_NAME.match(text)
    if name:
        matchers.append(_Matcher("__name__", "=", name.group()))
    pos = _skip(text, name.end() if name else 0)
    if text[pos : pos + 1] == "{":
        pos = _skip(text, pos + 1)
        while text[pos : pos + 1] != "}":
            label = _LABEL_NAME.match(text, pos)
            op = label and _OP.match(text, _skip(text, label.end()))
            string = op and _STRING.match(text, _skip(text, op.end()))
            if not (label and op and string):
                raise fail
            matchers.append(_matcher(label.group(), op.group(), _unquote(string.group()), promql))
            pos = _skip(text, string.end())
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
            elif text[pos : pos + 1] != "}":
                raise fail
        pos = _skip(text, pos + 1)
    if pos != len(text) or not matchers:
        raise fail
    if all(m({}) for m in matchers):
        raise ToolFailure(f'a selector needs a metric name or a non-empty matcher such as service="x": {promql}')
    return tuple(matchers)


def _skip(text: str, pos: int) -> int:
    return len(text) - len(text[pos:].lstrip())


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    if literal[0] == "`":
        return body
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


def _matcher(label: str, op: str, value: str, promql: str) -> _Matcher:
    if op in ("=", "!="):
        return _Matcher(label, op, value)
    return _Matcher(
        label, op, value, compile_model_regex(value, where=f"The regular expression {value!r} for {label} in {promql}")
    )


@dataclass(frozen=True)
class _Recorded:
    """One recorded series: its labels (with __name__) and its samples in time order."""

    labels: dict[str, str]
    times: list[float]
    values: list[float]

    def at(self, t: float) -> float | None:
        """The latest sample at or before `t` within the lookback, or None (the series is stale there)."""
        i = bisect.bisect_right(self.times, t) - 1
        return self.values[i] if i >= 0 and self.times[i] > t - LOOKBACK_S else None

    def seen(self, lo: float, hi: float) -> bool:
        """Whether any sample lies in [lo, hi]."""
        i = bisect.bisect_left(self.times, lo)
        return i < len(self.times) and self.times[i] <= hi


class FileMetricsClient:
    """The `PrometheusClient` methods over a JSON-lines file of recorded series, loaded once.

    Each line: {"metric": "name", "labels": {"service": "x"}, "points": [[unix_ts, value], ...]}; values may be
    numbers or "NaN"/"+Inf"/"-Inf". Lines with the same name and labels are one series. A missing or malformed file
    raises ValueError (naming the line). Naive datetimes are taken as UTC.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._series = _load(self.path)
        self._by_name: dict[str, list[_Recorded]] = {}
        for recorded in self._series:
            self._by_name.setdefault(recorded.labels["__name__"], []).append(recorded)
        self.last_sample = max((r.times[-1] for r in self._series if r.times), default=None)
        """The newest recorded time: `query()` without `at` evaluates there (a recording's "now")."""

    async def query_range(self, promql: str, start: datetime, end: datetime, step_s: float) -> list[Series]:
        """Each matching series sampled at start, start+step, … ≤ end; series with no sample there are left out."""
        if not step_s > 0:
            raise ToolFailure(f"the step must be positive, got {step_s:g} s")
        first, last = _unix(start), _unix(end)
        count = math.floor((last - first) / step_s + 1e-9) + 1 if last >= first else 0
        if count > MAX_GRID_POINTS:
            raise ToolFailure(
                f"more than {MAX_GRID_POINTS} points per series.", hint="Raise the step or narrow the window."
            )
        grid = [first + k * step_s for k in range(count)]
        return self._evaluate(promql, grid)

    async def query(self, promql: str, at: datetime | None = None) -> list[Series]:
        """Each matching series' value at one instant, by default the newest recorded time."""
        moment = _unix(at) if at is not None else self.last_sample
        return self._evaluate(promql, [] if moment is None else [moment])

    async def label_values(
        self,
        label: str,
        match: str | Sequence[str] | None = None,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> list[str]:
        """The values of `label` on series with samples in [start, end] matching any of the selectors in `match`."""
        if not _LABEL_NAME.fullmatch(label):
            raise ToolFailure(f'"{label}" is not a label name.', hint="Use letters, digits and _, e.g. service.")
        selectors = [_parse_selector(s) for s in ([match] if isinstance(match, str) else match or [])]
        lo, hi = _bounds(start, end)
        values = {
            r.labels.get(label, "")
            for r in self._series
            if r.seen(lo, hi) and (not selectors or any(all(m(r.labels) for m in s) for s in selectors))
        }
        return sorted(values - {""})

    async def label_names(self, *, start: datetime | None = None, end: datetime | None = None) -> list[str]:
        """Every label name on series with samples in [start, end]."""
        lo, hi = _bounds(start, end)
        return sorted({name for r in self._series if r.seen(lo, hi) for name in r.labels})

    async def series(
        self, match: str, *, start: datetime | None = None, end: datetime | None = None, limit: int = 0
    ) -> list[dict[str, str]]:
        """The label sets of the series the selector `match` selects with samples in [start, end]."""
        selector = _parse_selector(match)
        lo, hi = _bounds(start, end)
        found = [
            dict(r.labels) for r in self._candidates(selector) if r.seen(lo, hi) and all(m(r.labels) for m in selector)
        ]
        return found[:limit] if limit else found

    def _evaluate(self, promql: str, grid: list[float]) -> list[Series]:
        selector = _parse_selector(promql)
        found = []
        for recorded in self._candidates(selector):
            if all(m(recorded.labels) for m in selector):
                points = [(t, v) for t in grid if (v := recorded.at(t)) is not None]
                if points:
                    found.append(Series(dict(recorded.labels), points))
        return found

    def _candidates(self, selector: tuple[_Matcher, ...]) -> list[_Recorded]:
        names = [m.value for m in selector if m.label == "__name__" and m.op == "="]
        return self._by_name.get(names[0], []) if names else self._series


def write_series(path: Path, series: Iterable[tuple[str, dict[str, str], Sequence[Point]]]) -> None:
    """Write (metric, labels, [(unix_ts, value), …]) in the format `FileMetricsClient` reads; ValueError if one is
    malformed (a bad name, a non-string label). Non-finite values are written as "NaN", "+Inf", "-Inf"."""
    lines = []
    for number, (name, labels, points) in enumerate(series, 1):
        values = [[t, _json_value(v)] for t, v in points]
        row = {"metric": name, "labels": dict(sorted(labels.items())), "points": values}
        try:
            _parse_row(row)
        except ValueError as exc:
            raise ValueError(f"series {number}: {exc}") from None
        lines.append(json.dumps(row, separators=(",", ":")) + "\n")
    Path(path).write_text("".join(lines), encoding="utf-8")


def _json_value(value: float) -> float | str:
    return value if math.isfinite(value) else "NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"


def _load(path: Path) -> list[_Recorded]:
    """The file's series, sorted by name and labels."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the recorded metrics file {path}: {exc}") from exc
    merged: dict[tuple[str, tuple[tuple[str, str], ...]], list[Point]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            name, labels, points = _parse_row(load_json(line))
        except ValueError as exc:  # json.JSONDecodeError included
            raise ValueError(f"{path} line {number}: {exc}") from None
        merged.setdefault((name, tuple(sorted(labels.items()))), []).extend(points)
    series = []
    for (name, labels), points in sorted(merged.items()):
        points.sort(key=lambda p: p[0])
        series.append(_Recorded({"__name__": name, **dict(labels)}, [t for t, _ in points], [v for _, v in points]))
    return series


def _parse_row(row: Any) -> tuple[str, dict[str, str], list[Point]]:
    if not isinstance(row, dict) or not set(row) <= _KEYS or "metric" not in row or "points" not in row:
        raise ValueError('expected {"metric": "name", "labels": {...}, "points": [[unix_ts, value], ...]}')
    name, labels, points = row["metric"], row.get("labels", {}), row["points"]
    if not isinstance(name, str) or not _METRIC_NAME.fullmatch(name):
        raise ValueError(f'"metric" must be a metric name (letters, digits, _ and :), got {name!r}')
    if not isinstance(labels, dict) or not all(
        isinstance(k, str) and _LABEL_NAME.fullmatch(k) and k != "__name__" and isinstance(v, str)
        for k, v in labels.items()
    ):
        raise ValueError(f'"labels" must map label names (not __name__) to strings, got {labels!r:.120}')
    if not isinstance(points, list):
        raise ValueError('"points" must be a list of [unix_ts, value] pairs')
    return name, labels, [_point(p) for p in points]


def _point(pair: Any) -> Point:
    try:
        ts, value = pair
        numeric = isinstance(ts, int | float) and not isinstance(ts, bool) and not isinstance(value, bool)
        if numeric and math.isfinite(ts):
            return float(ts), float(value)
    except (TypeError, ValueError):
        pass
    raise ValueError(f'a point must be [unix_ts, value] (a finite number, then a number or "NaN"), got {pair!r:.80}')


def _bounds(start: datetime | None, end: datetime | None) -> tuple[float, float]:
    """[start, end] in unix seconds, unbounded where not given."""
    return (_unix(start) if start is not None else -math.inf, _unix(end) if end is not None else math.inf)


def _unix(moment: datetime) -> float:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
