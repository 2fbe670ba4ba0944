"""One kind of secret as the redactor runs it: a compiled regex, the group that is the secret, and its pre-check."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kernel.redaction.secret_lexicon import marker

_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class SecretPattern:
    """One kind of secret: a compiled regex and which of its groups is the secret itself.

    Only `group` is masked, so context such as `password=` or a URL's user and host survives.
    The group must lie inside the match; a group that did not take part or is empty masks nothing.
    """

    name: str
    regex: re.Pattern[str]
    group: int | str = 0
    hints: tuple[str, ...] = ()
    """Lower-case substrings, one of which every match contains: text with none of them skips the
    regex (most tool output holds no secret, so this pre-check is most of the speed). Empty: always run."""
    each: re.Pattern[str] | None = None
    """Within the group, mask only the `value` group of each match of this (every cookie's value in a
    `Cookie:` header, keeping the names; every password flag's value in a command); None: mask the whole group."""
    kind: Callable[[re.Match[str]], str | None] | None = None
    """The kind of secret each match holds, naming its marker, or None to leave the match as it is (a variable
    name read against the secret lexicon); None: every match is a secret named `name`."""

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"pattern name {self.name!r} must match {_NAME.pattern}")
        known = self.regex.groupindex if isinstance(self.group, str) else range(self.regex.groups + 1)
        if self.group not in known:
            raise ValueError(f"pattern {self.name!r} has no group {self.group!r}")

    @property
    def marker(self) -> str:
        """What a secret of this kind is replaced with."""
        return marker(self.name)


def secret_pattern(
    name: str,
    regex: str,
    group: int | str = 0,
    flags: int = 0,
    *,
    hints: tuple[str, ...],
    each: re.Pattern[str] | None = None,
    kind: Callable[[re.Match[str]], str | None] | None = None,
) -> SecretPattern:
    """A `SecretPattern` from the regex's text."""
    return SecretPattern(name, re.compile(regex, flags), group, hints, each, kind)


# The value: quoted (up to the closing quote) or bare (up to whitespace or a delimiter); never an
# existing marker, never starting with a blank, never kubectl's "16 bytes" size listing.
VALUE = (
    r"(?P<vq>[\"'])?(?!\[REDACTED:|\s|\d+ bytes\b)"
    r"(?P<secret>(?(vq)[^\"'\r\n]+|[^\s\"'`,;&<>(){}\[\]]+))"
)
