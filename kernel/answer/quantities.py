"""Quantities in a claim and in a step's output, read as values: a number, its decimals and its unit, in the unit's
dimension ("percent", "seconds", "bytes", "per second", "count:line"), so that `0.2%` is `0.20%` and `2s` is `2000ms`.

`QUANTITY` runs on model and tool text: it is linear (possessive runs, bounded units, fixed-width lookbehinds).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

QUANTITY = re.compile(
    r"(?<![\w,.])(?<![A-Za-z]{2}-)(\d{1,3}(?:,\d{3})++|\d++)(\.\d++)?+([ \u00a0]?+)(%|[A-Za-zµ]{1,12}+(?:/[A-Za-z]{1,3}+)?+)?+"
)
"""A number, its decimals, and the unit right after it ("12.0%", "2000ms", "1,482 lines", "30 minutes"); not one
inside a word ("p99", "HikariPool-1"; "t-30m" is read as 30m)."""
_TOLERANCE, _HEDGED_TOLERANCE = 0.02, 0.10
_ROUNDED = 0.05
"""A value rounded as written may differ by this much (relative) at most."""


_SECONDS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0}
_SECONDS |= {"m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "h": 3600.0, "hr": 3600.0, "hrs": 3600.0}
_SECONDS |= {"hour": 3600.0, "d": 86400.0, "day": 86400.0}
_BYTES = {"B": 1.0, "KB": 1e3, "kB": 1e3, "KiB": 1024.0, "Ki": 1024.0, "MB": 1e6, "MiB": 2.0**20, "Mi": 2.0**20}
_BYTES |= {"GB": 1e9, "GiB": 2.0**30, "Gi": 2.0**30, "TB": 1e12, "TiB": 2.0**40, "Ti": 2.0**40}
_RATES = {"rps": 1.0, "qps": 1.0, "req/s": 1.0, "requests/s": 1.0, "/s": 1.0, "rpm": 1 / 60}
_COUNTED_NOUNS = (
    "line error request pod replica connection restart file commit message event instance node retry user host "
    "container job query alert failure timeout exception call span trace thread worker row record order attempt "
    "deploy deployment core crash occurrence time"
)
_COUNTED = frozenset(_COUNTED_NOUNS.split())
"""Nouns counted in whole numbers ("1,482 lines"): compared exactly, never with a tolerance."""


@dataclass(frozen=True, slots=True)
class Reading:
    """One way to read a quantity: its dimension ("percent", "seconds", "count:line"), its value in the dimension's
    base unit, the unit's size, and the decimals it was written with."""

    dimension: str
    value: float
    scale: float
    decimals: int


def readings(found: re.Match[str]) -> tuple[Reading, ...]:
    """What a number and its unit can mean. "503s" with no space is a duration or status codes, so both."""
    whole, fraction, space, unit = found.group(1), found.group(2) or "", found.group(3), found.group(4) or ""
    value = float(whole.replace(",", "") + fraction)
    decimals = max(0, len(fraction) - 1)
    scaled = _unit(unit) if unit else None
    if scaled is None:  # "1,290 upstream errors": a number written with separators is a count of something
        return (Reading("count:", value, 1.0, 0),) if "," in whole and not fraction else ()
    dimension, scale = scaled
    reading = Reading(dimension, value * scale, scale, decimals)
    if unit == "s" and not space and not fraction and 100 <= value < 600:
        return (reading, Reading("count:", value, 1.0, 0))
    return (reading,)


def _unit(unit: str) -> tuple[str, float] | None:
    """A unit's dimension and size in the dimension's base unit (seconds, bytes, per second, percent)."""
    lowered = unit.lower()
    if unit == "%" or lowered in ("percent", "pct"):
        return "percent", 1.0
    singular = lowered[:-1] if lowered.endswith("s") and len(lowered) > 3 else lowered
    if singular in _SECONDS:
        return "seconds", _SECONDS[singular]
    if unit in _BYTES or unit.upper() in ("KB", "MB", "GB", "TB"):
        return "bytes", _BYTES.get(unit) or _BYTES[unit.upper()]
    if singular == "byte":
        return "bytes", 1.0
    if lowered in _RATES:
        return "per second", _RATES[lowered]
    noun = lowered[:-3] + "y" if lowered.endswith("ies") else singular
    if noun in _COUNTED:
        return f"count:{noun}", 1.0
    return None


def same_value(claimed: Reading, hedged: bool, quantities: Collection[Reading], numbers: Collection[int]) -> bool:
    """Whether a step's `quantities` (or, for a count, its bare `numbers`) show the claimed value."""
    if claimed.dimension.startswith("count"):
        noun = claimed.dimension
        exact = int(claimed.value) if claimed.value.is_integer() else -1
        if exact in numbers:  # "restarts=0", "max_connections=4": tools write counts without their noun
            return True
        return any(q.dimension == noun and q.value == claimed.value for q in quantities)
    return any(q.dimension == claimed.dimension and _close(claimed, q, hedged) for q in quantities)


def _close(claimed: Reading, observed: Reading, hedged: bool) -> bool:
    """Within the tolerance, or (in the same unit, and within `_ROUNDED`) what the claimed value rounds from at its
    written decimals: "12%" for 12.4%, but "2%" is not 2.4%."""
    tolerance = _HEDGED_TOLERANCE if hedged else _TOLERANCE
    apart = abs(claimed.value - observed.value)
    largest = max(abs(claimed.value), abs(observed.value))
    if apart <= tolerance * largest:
        return True
    half = 0.5 * 10.0**-claimed.decimals
    return claimed.scale == observed.scale and apart / claimed.scale <= half + 1e-9 and apart <= _ROUNDED * largest
