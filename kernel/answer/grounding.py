"""Grounding by code: a claim that cites no step is looked for in the run's successful observations.

A claim's anchors are what a step's output would show if the claim came from it: numbers with units and
percentages, versions, identifiers (in code spans, snake_case, kebab-case with a digit, CamelCase, commit hashes),
quoted strings, file paths, clock times, and the names the run's calls used (services, metrics). A claim is
grounded when every anchor is found in some successful step's observation or headline and at least one of them is
more than a name ("checkout" alone is in every step of a checkout incident). Values are compared as values: `0.2%`
is `0.20%`, `2s` is `2000ms`, a measured value may differ by 2% (10% when the claim says "about"), and a value
written with fewer decimals stands for what rounds to it (`12%` for `12.4%`; `quantities.py`). A count is found as
tools write it too ("0 restarts" in `restarts=0`). A claim that names a service must find its values in a step
about that service ("payments rose to 12%" is not grounded by checkout's 12%). Of the steps that show the same
anchors, the one that shows more of the claim (its bare numbers, its tool's name) is named.

Every regex here runs on model and tool text: each is linear (bounded or possessive runs, no nested repetition).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from kernel.answer.quantities import QUANTITY, Reading, readings, same_value
from kernel.calls import FINISH_TOOL, ToolCall
from kernel.tool_errors import ErrorKind

_TOKEN = re.compile(r"`[^`\n]{1,200}+`|[\"“][^\"“”\n]{2,200}+[\"”]|[\w@][\w.,:/@%+-]{0,199}+")
"""A claim's tokens: a code span, a quoted string, or a run of word characters and the marks identifiers use."""
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
_PUNCTUATION = ".,:;!?)(]["
_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


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
class Anchor:
    """Something a claim says that a step's output would show: `text` as written."""

    text: str
    kind: AnchorKind
    needle: str = ""
    """What is looked for in a step's text (lower case, blanks collapsed); "" for a quantity."""
    readings: tuple[Reading, ...] = ()
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
    apart: bool = False
    """The claim names a service (or another of the run's names) that no step showing its values (else its other
    strong anchors) is about: "payment-service rose to 12%" when 12% is order-service's."""

    @property
    def grounded(self) -> bool:
        """Every anchor found, at least one of them strong, and found with the names the claim gives them."""
        return not self.missing and not self.apart and any(anchor.strong for anchor in self.anchors)


@dataclass(frozen=True, slots=True)
class _Seen:
    """One successful step's text, read once: lower case with blanks collapsed, the quantities in it, and the names
    its call used."""

    index: int
    text: str
    quantities: tuple[Reading, ...]
    numbers: frozenset[int]
    names: frozenset[str]
    tool_words: frozenset[str]
    """The words of its tool's name: "search", "logs"."""


class Observations:
    """The successful observations of a run, read once, and the names its calls used; claims are grounded in them."""

    def __init__(self, steps: Sequence[Step]) -> None:
        evidence = [s for s in steps if _is_evidence(s)]
        self._seen = tuple(_seen(s) for s in evidence)
        self.names = frozenset(_names(s.call for s in evidence))

    def ground(self, claim: str) -> Grounding:
        """The claim's anchors, the fewest steps that show all of its strong ones (its weak ones when it has no
        strong one), the anchors no step shows, and whether the steps that show its strong ones are about none of
        the names it gives."""
        anchors = anchors_in(claim, self.names)
        where = [frozenset(seen.index for seen in self._seen if _shows(seen, anchor)) for anchor in anchors]
        missing = tuple(anchor.text for anchor, found in zip(anchors, where, strict=True) if not found)
        strong = [found for anchor, found in zip(anchors, where, strict=True) if anchor.strong and found]
        named = [anchor for anchor in anchors if anchor.kind is AnchorKind.NAME]
        about = {seen.index for seen in self._seen if any(n.needle in seen.names or _shows(seen, n) for n in named)}
        values = [found for anchor, found in zip(anchors, where, strict=True) if anchor.kind is AnchorKind.QUANTITY]
        facts = [found for found in values if found] or strong  # a value is what is most easily given to another
        apart = bool(named and facts) and not any(found & about for found in facts)
        shown_by = strong or [found for found in where if found]
        return Grounding(anchors, _fewest(shown_by, self._closeness(claim)), missing, apart)

    def _closeness(self, claim: str) -> dict[int, int]:
        """How much of the claim besides its anchors each step shows: its bare numbers ("from 64 to 4"), and the
        words of the step's tool ("the rollback", "the logs show")."""
        numbers = {int(found.group(1).replace(",", "")) for found in QUANTITY.finditer(claim) if not found.group(2)}
        words = set(claim.lower().split())
        return {seen.index: len(numbers & seen.numbers) + len(words & seen.tool_words) for seen in self._seen}


def _fewest(shown_by: list[frozenset[int]], closeness: dict[int, int]) -> tuple[int, ...]:
    """The fewest steps that show every anchor (greedily: the step that shows most of those left; on a tie the one
    `closeness` ranks higher, then the earliest), so a claim names the steps that say it, not every step that
    mentions its service."""
    left, chosen = list(shown_by), []
    while left:
        counts: dict[int, int] = {}
        for found in left:
            for index in found:
                counts[index] = counts.get(index, 0) + 1
        best = min(counts, key=lambda index: (-counts[index], -closeness.get(index, 0), index))
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
    for found in QUANTITY.finditer(claim):
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
    read = readings(found)
    if not read:
        return None
    return Anchor(found.group().strip(), AnchorKind.QUANTITY, readings=read, hedged=hedged)


def _seen(step: Step) -> _Seen:
    text = f"{step.headline}\n{step.observation}" if step.headline else step.observation
    quantities: list[Reading] = []
    numbers: set[int] = set()
    for found in QUANTITY.finditer(text):
        quantities.extend(readings(found))
        if not found.group(2):
            numbers.add(int(found.group(1).replace(",", "")))
    names = frozenset(_names([step.call]))
    tool_words = frozenset(step.call.name.lower().split("_")) if step.call is not None else frozenset()
    return _Seen(step.index, " ".join(text.lower().split()), tuple(quantities), frozenset(numbers), names, tool_words)


def _shows(seen: _Seen, anchor: Anchor) -> bool:
    """Whether one step's text shows one anchor."""
    match anchor.kind:
        case AnchorKind.QUANTITY:
            return any(same_value(claimed, anchor.hedged, seen.quantities, seen.numbers) for claimed in anchor.readings)
        case AnchorKind.CODE | AnchorKind.QUOTED | AnchorKind.PATH:
            return anchor.needle in seen.text
        case AnchorKind.VERSION:
            return any(_version_at(seen.text, at, anchor.needle) for at in _occurrences(seen.text, anchor.needle))
        case AnchorKind.CLOCK:
            return any(
                _bounded(seen.text, at, anchor.needle, "0123456789") for at in _occurrences(seen.text, anchor.needle)
            )
        case AnchorKind.NAME:
            return _names_word(seen.text, anchor.needle)
        case AnchorKind.IDENTIFIER:  # "500 NullPointerExceptions" for lines that each say NullPointerException
            singular = anchor.needle[:-1] if anchor.needle.endswith("s") and len(anchor.needle) > 5 else ""
            return _names_word(seen.text, anchor.needle) or (bool(singular) and _names_word(seen.text, singular))


def _names_word(text: str, needle: str) -> bool:
    return any(_bounded(text, at, needle, _WORD | {"-"}) for at in _occurrences(text, needle))


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
