"""Time in words, read and written alike by every tool family: durations, windows, spans, relative times, ISO-8601.

The model writes "15m", "2h30m", "t-12m" or an ISO time and reads "t-10m" and "1h30m" back, whichever tool it calls;
one module keeps those words the same everywhere. `utc_now` is the one wall clock the tools (and the bot) default to.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from kernel import ToolFailure

MIN_WINDOW_S = 60
MAX_WINDOW_S = 7 * 86400
_DURATION = re.compile(r"(?:\d+[wdhms])+")
_RELATIVE = re.compile(r"(?:t-|now-|-)?(?P<parts>(?:\d+[smhdw])+)")
_PART = re.compile(r"(?<!\d)(\d++)([wdhms])")  # from a number's first digit: one scan per number
_SECONDS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_NOW_WORDS = ("now", "t", "t-0", "")
TIME_FORMATS = (
    "a relative time such as '15m', '2h', '1d' or 't-12m' (that long before now), 'now', "
    "or an ISO-8601 time such as '2026-11-30T03:20:00Z' or '2026-11-30T04:20:00+01:00'"
)


def utc_now() -> datetime:
    """The wall clock, aware and in UTC: the default clock of the tools and the bot (tests and replays pass theirs)."""
    return datetime.now(UTC)


# --- durations and windows -----------------------------------------------------------------


def parse_duration(text: str, what: str = "window") -> float:
    """Seconds in a duration such as 15m, 1h or 2h30m (units w, d, h, m, s)."""
    compact = text.strip().lower().replace(" ", "")
    if not _DURATION.fullmatch(compact):
        raise ToolFailure(
            f'{what} "{text}" is not a duration.', hint="Write it like 15m, 1h or 2h30m (units s, m, h, d)."
        )
    return float(_seconds(compact))


def window_seconds(text: str) -> float:
    """A query window in seconds, between 1m and 7d."""
    seconds = parse_duration(text)
    if seconds < MIN_WINDOW_S:
        raise ToolFailure(f'window "{text}" is shorter than 1m.', hint="Use at least 1m, e.g. 15m, 1h or 2h30m.")
    if seconds > MAX_WINDOW_S:
        raise ToolFailure(f'window "{text}" is longer than 7d.', hint="Use at most 7d, e.g. 15m, 1h or 2h30m.")
    return seconds


def format_span(seconds: float) -> str:
    """A duration as 45s, 10m, 1h30m or 2d3h: seconds are dropped past an hour, minutes past a day."""
    total = int(abs(seconds) + 0.5)  # half up, not Python's half to even
    if total >= 86400:
        total = (total + 1800) // 3600 * 3600
    elif total >= 3600:
        total = (total + 30) // 60 * 60
    parts = []
    for size, name in ((86400, "d"), (3600, "h"), (60, "m"), (1, "s")):
        count, total = divmod(total, size)
        if count:
            parts.append(f"{count}{name}")
    return "".join(parts) or "0s"


def clock_span(first: datetime, last: datetime) -> str:
    """ "20:14–20:25 UTC", "at 20:14 UTC", or with dates when the span crosses midnight."""
    first, last = first.astimezone(UTC), last.astimezone(UTC)
    shape = "%H:%M" if first.date() == last.date() else "%m-%d %H:%M"
    start, end = first.strftime(shape), last.strftime(shape)
    return f"at {start} UTC" if start == end else f"{start}–{end} UTC"


# --- points in time ------------------------------------------------------------------------


def relative_time(ts: float, now: float) -> str:
    """A sample time relative to the end of the window: "t-10m", or "now" within a second of it."""
    offset = now - ts
    if abs(offset) < 1:
        return "now"
    return f"t-{format_span(offset)}" if offset > 0 else f"t+{format_span(offset)}"


def time_ago(moment: datetime, now: datetime) -> str:
    """How long ago a moment was, for people, in days once it is two days old: "3 days ago", "5 h ago"."""
    days = (now - moment).days
    return f"{days} days ago" if days >= 2 else f"{int((now - moment).total_seconds() // 3600)} h ago"


def parse_iso(text: str) -> datetime | None:
    """An ISO-8601 time (Z, an offset, or none meaning UTC; `,` or `.` before fractions) in UTC, or None."""
    text = text.strip()
    if not text[:4].isdigit():
        return None
    if text[-1:] in "zZ":
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def parse_time(text: str, now: datetime) -> datetime:
    """A point in time from `now`-relative text ("15m", "t-12m", "now") or ISO-8601, in UTC."""
    spec = text.strip()
    if spec.lower() in _NOW_WORDS:
        return now.astimezone(UTC)
    relative = _RELATIVE.fullmatch(spec.lower())
    if relative:
        return now.astimezone(UTC) - timedelta(seconds=_seconds(relative.group("parts")))
    parsed = parse_iso(spec)
    if parsed is None:
        raise ToolFailure(f"Cannot read the time {text!r}.", hint=f"Use {TIME_FORMATS}.")
    return parsed


def describe_time(text: str, when: datetime) -> str:
    """How a time argument is shown in a result header: `t-12m`, `now`, or the ISO time."""
    spec = text.strip().lower()
    if spec in _NOW_WORDS:
        return "now"
    relative = _RELATIVE.fullmatch(spec)
    return f"t-{relative.group('parts')}" if relative else when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(parts: str) -> int:
    """The seconds in unit-suffixed counts already matched as a whole ("2h30m")."""
    return sum(int(count) * _SECONDS[unit] for count, unit in _PART.findall(parts))
