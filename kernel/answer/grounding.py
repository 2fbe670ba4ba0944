"""Grounding by code: a claim that cites no step is looked for in the run's successful observations.

A claim's anchors are what a step's output would show if the claim came from it: numbers with units and
percentages, versions, identifiers (in code spans, snake_case, kebab-case with a digit, CamelCase, commit hashes),
quoted strings, file paths, clock times, and the names the run's calls used (services, metrics). A claim is
grounded when every anchor is found in some successful step's observation or headline and at least one of them is
more than a name ("checkout" alone is in every step of a checkout incident). Values are compared as values: `0.2%`
is `0.20%`, `2s` is `2000ms`, a measured value may differ by 2% (10% when the claim says "about"), and a value
written with fewer decimals stands for what rounds to it (`12%` for `12.4%`).

Every regex here runs on model and tool text: each is linear (bounded or possessive runs, no nested repetition).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from kernel.calls import FINISH_TOOL, ToolCall
from kernel.tool_errors import ErrorKind

_TOKEN = re.compile(r"`[^`\n]{1,200}+`|[\"“][^\"“”\n]{2,200}+[\"”]|[\w@][\w.,:/@%+-]{0,199}+")
"""A claim's tokens: a code span, a quoted string, or a run of word characters and the marks identifiers use."""
_QUANTITY = re.compile(
    r"(?<![\d,.])(\d{1,3}(?:,\d{3})++|\d++)(\.\d++)?+([ \u00a0]?+)(%|[A-Za-zµ]{1,12}+(?:/[A-Za-z]{1,3}+)?+)?+"
)
"""A number, its decimals, and the unit right after it ("12.0%", "2000ms", "1,482 lines", "30 minutes")."""
_VERSION = re.compile(r"[vV]?+\d{1,4}+(?:\.\d{1,6}+){1,3}+(?:-[0-9A-Za-z.]{1,30}+)?+")
_CLOCK = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?+(?:\.\d{1,9}+)?+Z?+")
_KEBAB = re.compile(r"[a-z0-9]++(?:-[a-z0-9]++)++")
_SNAKE = re.compile(r"[A-Za-z0-9]++(?:_[A-Za-z0-9]*+)++(?:\.[A-Za-z0-9_]++)*+")
_CAMEL = re.compile(r"[A-Za-z][A-Za-z0-9]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)*+(?:\(\))?+")
_HEX = re.compile(r"[0-9a-f]{7,40}+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EXTENSIONS = _words(
    "yaml yml json toml ini cfg conf properties xml env py java kt go js ts rb rs cs php c h cpp sql sh tf md txt "
    "log lock gradle proto"
)
_SERVICE_SUFFIXES = ("-service", "-svc", "-api", "-gateway", "-worker", "-db", "-proxy", "-server", "-cache")
_NAME_ARGUMENTS = _words("service services deployment namespace pod container app job metric workload repo host node")
"""Call arguments whose values are names a claim may use (`query_metrics(service="checkout")`)."""
_HEDGES = ("about", "around", "roughly", "approx", "nearly", "almost", "~", "≈", "some ")
_TOLERANCE, _HEDGED_TOLERANCE = 0.02, 0.10
_ROUNDED = 0.05
"""A value rounded as written may differ by this much (relative) at most."""
_PUNCTUATION = ".,:;!?)(]["
_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")

_SECONDS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0}
_SECONDS |= {"m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "h": 3600.0, "hr": 3600.0, "hrs": 3600.0}
_SECONDS |= {"hour": 3600.0, "d": 86400.0, "day": 86400.0}
_BYTES = {"B": 1.0, "KB": 1e3, "kB": 1e3, "KiB": 1024.0, "Ki": 1024.0, "MB": 1e6, "MiB": 2.0**20, "Mi": 2.0**20}
_BYTES |= {"GB": 1e9, "GiB": 2.0**30, "Gi": 2.0**30, "TB": 1e12, "TiB": 2.0**40, "Ti": 2.0**40}
_RATES = {"rps": 1.0, "qps": 1.0, "req/s": 1.0, "requests/s": 1.0, "/s": 1.0, "rpm": 1 / 60}
_COUNTED = _words(
    "line error request pod replica connection restart file commit message event instance node retry user host "
    "container job query alert failure timeout exception call span trace thread worker row record order attempt "
    "deploy deployment core crash occurrence time"
)
"""Nouns counted in whole numbers ("1,482 lines"): compared exactly, never with a tolerance."""


class AnchorKind(StrEnum):
    """What an anchor is, which says how it is looked for."""

    QUANTITY = "quantity"
    VERSION = "version"
    IDENTIFIER = "identifier"
    CODE = "code"
    QUOTED = "quoted"
    PATH = "path"
    CLOCK = "clock"
    NAME = "name"
    """A name the run's calls used: found like an identifier, but it cannot ground a claim alone."""


@dataclass(frozen=True, slots=True)
class _Reading:
    """One way to read a quantity: its dimension ("percent", "seconds", "count:line"), its value in the dimension's
    base unit, the unit's size, and the decimals it was written with."""

    dimension: str
    value: float
    scale: float
    decimals: int


@dataclass(frozen=True, slots=True)
class Anchor:
    """Something a claim says that a step's output would show: `text` as written."""

    text: str
    kind: AnchorKind
    needle: str = ""
    """What is looked for in a step's text (lower case, blanks collapsed); "" for a quantity."""
    readings: tuple[_Reading, ...] = ()
    hedged: bool = False

    @property
    def strong(self) -> bool:
        """Whether finding it says something: a name does not, nor a small count ("3 pods")."""
        if self.kind is AnchorKind.NAME:
            return False
        return self.kind is not AnchorKind.QUANTITY or any(
            not r.dimension.startswith("count") or r.value >= 10 for r in self.readings
        )


class Step(Protocol):
    """What grounding reads of a step (`kernel.trace.Step`)."""

    @property
    def index(self) -> int: ...
    @property
    def call(self) -> ToolCall | None: ...
    @property
    def error(self) -> ErrorKind | None: ...
    @property
    def observation(self) -> str: ...
    @property
    def headline(self) -> str: ...
    @property
    def pending(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Grounding:
    """Where a claim's anchors were found."""

    anchors: tuple[Anchor, ...]
    steps: tuple[int, ...]
    """The steps that show its anchors (those that show a strong one, when any does)."""
    missing: tuple[str, ...]
    """The anchors no successful step shows, as written."""

    @property
    def grounded(self) -> bool:
        """Every anchor found, and at least one of them strong."""
        return not self.missing and any(anchor.strong for anchor in self.anchors)


@dataclass(frozen=True, slots=True)
class _Seen:
    """One successful step's text, read once: lower case with blanks collapsed, and the quantities in it."""

    index: int
    text: str
    quantities: tuple[_Reading, ...]
    numbers: frozenset[int]


class Observations:
    """The successful observations of a run, read once, and the names its calls used; claims are grounded in them."""

    def __init__(self, steps: Sequence[Step]) -> None:
        evidence = [s for s in steps if _is_evidence(s)]
        self._seen = tuple(_seen(s) for s in evidence)
        self.names = frozenset(_names(s.call for s in evidence))

    def ground(self, claim: str) -> Grounding:
        """The claim's anchors, the fewest steps that show all of its strong ones (its weak ones when it has no
        strong one), and the anchors no step shows."""
        anchors = anchors_in(claim, self.names)
        where = [frozenset(seen.index for seen in self._seen if _shows(seen, anchor)) for anchor in anchors]
        missing = tuple(anchor.text for anchor, found in zip(anchors, where, strict=True) if not found)
        strong = [found for anchor, found in zip(anchors, where, strict=True) if anchor.strong and found]
        return Grounding(anchors, _fewest(strong or [found for found in where if found]), missing)


def _fewest(shown_by: list[frozenset[int]]) -> tuple[int, ...]:
    """The fewest steps that show every anchor (greedily: the step that shows most of those left, the earliest on a
    tie), so a claim names the steps that say it, not every step that mentions its service."""
    left, chosen = list(shown_by), []
    while left:
        counts: dict[int, int] = {}
        for found in left:
            for index in found:
                counts[index] = counts.get(index, 0) + 1
        best = min(counts, key=lambda index: (-counts[index], index))
        chosen.append(best)
        left = [found for found in left if best not in found]
    return tuple(sorted(chosen))


def anchors_in(claim: str, names: frozenset[str] = frozenset()) -> tuple[Anchor, ...]:
    """The anchors of a claim in the order it says them, each once; `names` are the names the run's calls used (lower
    case)."""
    placed: list[tuple[int, Anchor]] = []
    starts: list[int] = []
    ends: list[int] = []
    for token in _TOKEN.finditer(claim):
        anchor = _classified(token.group(), names)
        if anchor is not None:
            placed.append((token.start(), anchor))
            starts.append(token.start())
            ends.append(token.end())
    for found in _QUANTITY.finditer(claim):
        at = bisect.bisect_right(starts, found.start()) - 1
        if at >= 0 and found.start() < ends[at]:
            continue  # inside an identifier or a version: "t-10m", "http_5xx_rate", "v2.14.0"
        before = claim[max(0, found.start() - 12) : found.start()].lower()
        anchor = _quantity(found, hedged=any(hedge in before for hedge in _HEDGES))
        if anchor is not None:
            placed.append((found.start(), anchor))
    anchors: dict[tuple[AnchorKind, str], Anchor] = {}
    for _, anchor in sorted(placed, key=lambda item: item[0]):
        anchors.setdefault((anchor.kind, anchor.needle or anchor.text), anchor)
    return tuple(anchors.values())


def _classified(token: str, names: frozenset[str]) -> Anchor | None:
    """A token as an anchor, or None when it is a plain word or a number (numbers are read as quantities)."""
    if token[0] == "`":
        code = " ".join(token[1:-1].split())
        return Anchor(token, AnchorKind.CODE, code.lower()) if len(code) >= 2 else None
    if token[0] in '"“':
        quoted = " ".join(token[1:-1].split())
        return Anchor(token, AnchorKind.QUOTED, quoted.lower()) if len(quoted) >= 3 else None
    word = token.rstrip(_PUNCTUATION)
    if ":" in word and not _CLOCK.fullmatch(word):  # "payment-service:8443", "PromoService.java:11"
        word = word.split(":", 1)[0]
    if not word:
        return None
    lowered = word.lower()
    if "/" in word and "://" not in word and _is_path(word):
        return Anchor(word, AnchorKind.PATH, lowered)
    if "." in word and word.rsplit(".", 1)[-1].lower() in _EXTENSIONS and len(word) > 4:
        return Anchor(word, AnchorKind.PATH, lowered)
    if _VERSION.fullmatch(word) and (lowered.startswith("v") or word.count(".") >= 2):
        return Anchor(word, AnchorKind.VERSION, lowered.removeprefix("v"))
    if ":" in word and _CLOCK.fullmatch(word):
        return Anchor(word, AnchorKind.CLOCK, lowered.removesuffix("z"))
    if "_" in word and _SNAKE.fullmatch(word) and any(c.isalpha() for c in word):
        return Anchor(word, AnchorKind.IDENTIFIER, lowered)
    if "-" in word and _KEBAB.fullmatch(word):
        if any(c.isdigit() for c in word):
            return Anchor(word, AnchorKind.IDENTIFIER, lowered)
        if lowered in names or lowered.endswith(_SERVICE_SUFFIXES):
            return Anchor(word, AnchorKind.NAME, lowered)
        return None
    if _is_camel(word):
        return Anchor(word, AnchorKind.IDENTIFIER, lowered)
    if len(word) >= 7 and _HEX.fullmatch(word) and not word.isdigit() and any(c.isdigit() for c in word):
        return Anchor(word, AnchorKind.IDENTIFIER, lowered)
    if lowered in names:
        return Anchor(word, AnchorKind.NAME, lowered)
    return None


def _is_path(word: str) -> bool:
    """ "config/payment-client.yaml", "/var/lib/postgresql": a file name with an extension, or two slashes or more
    ("req/s" and "and/or" are no paths)."""
    last = word.rstrip("/").rsplit("/", 1)[-1]
    extension = last.rsplit(".", 1)[-1].lower() if "." in last else ""
    return extension in _EXTENSIONS or word.count("/") >= 2


def _is_camel(word: str) -> bool:
    """ "NullPointerException", "PromoService.apply", "OOMKilled": a capital after the first letter, and a lower case
    letter ("HTTP" and "Checkout" are words)."""
    head = word.split(".", 1)[0]
    return (
        len(head) >= 4
        and any(c.isupper() for c in head[1:])
        and any(c.islower() for c in head)
        and _CAMEL.fullmatch(word) is not None
    )


def _quantity(found: re.Match[str], *, hedged: bool) -> Anchor | None:
    """A number with a unit as an anchor; None for a bare number or an unknown unit."""
    readings = _readings(found)
    if not readings:
        return None
    return Anchor(found.group().strip(), AnchorKind.QUANTITY, readings=readings, hedged=hedged)


def _readings(found: re.Match[str]) -> tuple[_Reading, ...]:
    """What a number and its unit can mean. "503s" with no space is a duration or status codes, so both."""
    whole, fraction, space, unit = found.group(1), found.group(2) or "", found.group(3), found.group(4) or ""
    value = float(whole.replace(",", "") + fraction)
    decimals = max(0, len(fraction) - 1)
    if not unit:
        return ()
    scaled = _unit(unit)
    if scaled is None:
        return ()
    dimension, scale = scaled
    reading = _Reading(dimension, value * scale, scale, decimals)
    if unit == "s" and not space and not fraction and 100 <= value < 600:
        return (reading, _Reading("count:", value, 1.0, 0))
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


def _seen(step: Step) -> _Seen:
    text = f"{step.headline}\n{step.observation}" if step.headline else step.observation
    quantities: list[_Reading] = []
    numbers: set[int] = set()
    for found in _QUANTITY.finditer(text):
        quantities.extend(_readings(found))
        if not found.group(2):
            numbers.add(int(found.group(1).replace(",", "")))
    return _Seen(step.index, " ".join(text.lower().split()), tuple(quantities), frozenset(numbers))


def _shows(seen: _Seen, anchor: Anchor) -> bool:
    """Whether one step's text shows one anchor."""
    match anchor.kind:
        case AnchorKind.QUANTITY:
            return any(_same_quantity(claimed, anchor.hedged, seen) for claimed in anchor.readings)
        case AnchorKind.CODE | AnchorKind.QUOTED | AnchorKind.PATH:
            return anchor.needle in seen.text
        case AnchorKind.VERSION:
            return any(_version_at(seen.text, at, anchor.needle) for at in _occurrences(seen.text, anchor.needle))
        case AnchorKind.CLOCK:
            return any(
                _bounded(seen.text, at, anchor.needle, "0123456789") for at in _occurrences(seen.text, anchor.needle)
            )
        case AnchorKind.IDENTIFIER | AnchorKind.NAME:
            return any(
                _bounded(seen.text, at, anchor.needle, _WORD | {"-"}) for at in _occurrences(seen.text, anchor.needle)
            )


def _same_quantity(claimed: _Reading, hedged: bool, seen: _Seen) -> bool:
    if claimed.dimension.startswith("count"):
        noun = claimed.dimension
        exact = int(claimed.value) if claimed.value.is_integer() else -1
        if exact >= 10 and exact in seen.numbers:
            return True
        return any(q.dimension == noun and q.value == claimed.value for q in seen.quantities)
    return any(q.dimension == claimed.dimension and _close(claimed, q, hedged) for q in seen.quantities)


def _close(claimed: _Reading, observed: _Reading, hedged: bool) -> bool:
    """Within the tolerance, or (in the same unit, and within `_ROUNDED`) what the claimed value rounds from at its
    written decimals: "12%" for 12.4%, but "2%" is not 2.4%."""
    tolerance = _HEDGED_TOLERANCE if hedged else _TOLERANCE
    apart = abs(claimed.value - observed.value)
    largest = max(abs(claimed.value), abs(observed.value))
    if apart <= tolerance * largest:
        return True
    half = 0.5 * 10.0**-claimed.decimals
    return claimed.scale == observed.scale and apart / claimed.scale <= half + 1e-9 and apart <= _ROUNDED * largest


def _occurrences(text: str, needle: str) -> Iterator[int]:
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


def _bounded(text: str, at: int, needle: str, inside: Iterable[str]) -> bool:
    """Whether `needle` at `at` stands alone: the characters around it are not of the kind it is made of."""
    chars = frozenset(inside)
    before = text[at - 1] if at else " "
    after = text[at + len(needle)] if at + len(needle) < len(text) else " "
    return before not in chars and after not in chars


def _version_at(text: str, at: int, version: str) -> bool:
    """A version stands alone: "2.14.0" in "v2.14.0" or "(2.14.0)", not in "12.14.0" nor "2.14.01" nor "2.14.0.1"."""
    before = text[at - 1] if at else " "
    end = at + len(version)
    after = text[end : end + 2]
    return (before == "v" or not (before.isalnum() or before == ".")) and not (
        after[:1].isdigit() or (after[:1] == "." and after[1:2].isdigit())
    )


def _is_evidence(step: Step) -> bool:
    """A step whose output may back a claim: a tool call that succeeded (not the `finish`, not awaiting approval)."""
    return step.error is None and step.call is not None and step.call.name != FINISH_TOOL and not step.pending


def _names(calls: Iterable[ToolCall | None]) -> Iterator[str]:
    """The names a run's calls used: `service="checkout"`, `metric="http_5xx_rate"`, one-word values only."""
    for call in calls:
        for key, value in call.args.items() if call is not None else ():
            values = value if isinstance(value, list) else [value]
            for item in values:
                if key in _NAME_ARGUMENTS and isinstance(item, str) and 2 <= len(item) <= 80 and " " not in item:
                    yield item.strip().lower()
