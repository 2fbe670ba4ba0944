"""Regular expressions written by the model, compiled with RE2: matching takes time linear in the text, always.

Python's `re` backtracks: one nested quantifier against one log line can hold the GIL for hours and freeze the
event loop (Slack, /healthz, every run, the tool timeout itself). RE2 has no backtracking, so no pattern can.
"""

from __future__ import annotations

from typing import Protocol

import re2

from kernel import ToolFailure

MAX_PATTERN_CHARS = 1000
"""Longest pattern accepted: a real search needs far less, and RE2's memory grows with the pattern."""
_MAX_MEM = 8 << 20
"""Bytes RE2 may use for one compiled pattern (its default): a bigger program is refused at compile time."""

_UNSUPPORTED = (
    ("invalid perl operator: (?=", "lookahead (?=…)"),
    ("invalid perl operator: (?!", "negative lookahead (?!…)"),
    ("invalid perl operator: (?<", "lookbehind (?<=…) or (?<!…)"),
    ("invalid perl operator: (?>", "atomic groups (?>…)"),
    ("invalid perl operator: (?P", "named backreferences (?P=name)"),
    ("bad repetition operator: *+", "possessive quantifiers (*+, ++, ?+)"),
    ("bad repetition operator: ++", "possessive quantifiers (*+, ++, ?+)"),
    ("bad repetition operator: ?+", "possessive quantifiers (*+, ++, ?+)"),
    ("invalid escape sequence: \\Z", "\\Z (write \\z for the end of the text)"),
)
"""RE2's error for a feature it does not have, and the feature's name for the model."""
SYNTAX = (
    "RE2 syntax (as Prometheus and Loki use): no backreferences (\\1) and no lookaround ((?=…), (?!…), (?<=…)); "
    "use \\z, not \\Z, for the end of the text"
)
"""What the model is told about the dialect, in tool descriptions and errors."""


class ModelRegex(Protocol):
    """A compiled model pattern: the two ways the tools apply one."""

    def search(self, text: str) -> object | None:
        """A match anywhere in `text`, or None."""
        ...

    def fullmatch(self, text: str) -> object | None:
        """A match of the whole of `text`, or None."""
        ...


def compile_model_regex(pattern: str, *, where: str) -> ModelRegex:
    """`pattern` compiled for linear-time matching; a `ToolFailure` saying how to rewrite it when RE2 cannot run it.

    `where` names the argument in the error (e.g. "the query 're:…'"), so the model knows what to fix.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolFailure(
            f"{where} is {len(pattern):,} characters long; patterns are limited to {MAX_PATTERN_CHARS:,}.",
            hint="Search for a shorter distinctive part of the line.",
        )
    options = re2.Options()
    options.log_errors = False  # RE2 would print the pattern to stderr, outside the redacting log pipeline
    options.max_mem = _MAX_MEM
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        if reason.startswith("invalid escape sequence: \\") and reason[-1:].isdigit():
            raise _unsupported(where, "backreferences (\\1)") from None
        feature = next((name for error, name in _UNSUPPORTED if reason.startswith(error)), None)
        if feature is not None:
            raise _unsupported(where, feature) from None
        raise ToolFailure(
            f"{where} is not a valid regular expression ({reason}). Patterns use {SYNTAX}.",
            hint="Fix the pattern, or search for a plain substring instead.",
        ) from None


def _unsupported(where: str, feature: str) -> ToolFailure:
    return ToolFailure(
        f"{where} uses {feature}, which this search cannot run: patterns are matched in linear time with {SYNTAX}.",
        hint="Rewrite it without that feature (e.g. match the repeated text literally, or search for the part you "
        "need and narrow with level, service or the time window).",
    )
