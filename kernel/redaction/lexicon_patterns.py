"""Text patterns built from the secret lexicon: credential flags on command lines, and variables whose name holds one.

The same tables drive `masked_argv` (a command as a list of words), so a flag masked in a log line is masked in an
exec probe too.
"""

from __future__ import annotations

import re

from kernel.redaction.secret_lexicon import (
    FLAG_WORDS,
    LEXICON_HINTS,
    PROGRAM_FLAGS,
    ProgramFlag,
    hints_for,
    secret_kind,
)
from kernel.redaction.secret_pattern import VALUE, SecretPattern, secret_pattern

_FLAG_VALUE = VALUE.replace("(?P<secret>", "(?P<value>")


def _program_flag(row: ProgramFlag) -> SecretPattern:
    """A program's own credential flags on a command line: every one up to the end of that command (a line's end,
    `;`, `|`, `&`), in one match, so a second `-a` is masked in the same pass as the first."""
    programs = "|".join(rf"{re.escape(p)}(?<![\w-].{{{len(p)}}})" for p in row.programs)  # a literal first: re skips
    flags = "|".join(re.escape(flag) for flag in row.flags)
    if row.user_first:
        value = r"[ \t=]+[\"']?[^\s:\"'\[]{1,256}:(?P<value>[^\s\"']+)"  # a user never holds a marker
    elif row.spaced:
        value = ("[ \t]*" if row.glued else "[ \t]+") + rf"(?!-){_FLAG_VALUE}"
    else:
        value = _FLAG_VALUE
    return secret_pattern(
        row.kind,
        rf"(?:{programs})(?![\w-])(?P<command>[^\n;|&]*+)",
        "command",
        hints=row.hints,
        each=re.compile(rf"[ \t](?:{flags}){value}"),
    )


def cli_patterns() -> tuple[SecretPattern, ...]:
    """Passwords and tokens given as command-line flags.

    `--password VALUE` (and `--db-password`, `--token`, `--client-secret`, `--api-key` …, never `--no-…`) masks a
    value that is quoted, or has a character other than a lower-case letter, or is 12 letters or more: prose such
    as "use --password to log in" stays. A program's own short flags only after it (`PROGRAM_FLAGS`: `-pSECRET`
    after mysql, `-a VALUE` after redis-cli, `-w VALUE` after ldapsearch, `-u user:password` after curl…; elsewhere
    `-p` is a port or a path flag); `-p VALUE` after `docker|podman … login`. The `=` forms are generic assignments.
    """
    value = (
        r"(?P<vq>[\"'])?(?!\[REDACTED:|-|\s)(?P<secret>(?(vq)[^\"'\r\n]+|(?:(?=[^\s\"'`;&|]*[^a-z\s\"'`;&|])"
        r"[^\s\"'`;&|]+|[a-z]{12,}(?![^\s\"'`;&|]))))"
    )
    flag = r"(?<![\w-])--(?![Nn]o-)(?:[A-Za-z0-9]+-)*"
    return (
        *(
            secret_pattern(
                kind,
                rf"{flag}(?i:{'|'.join(re.escape(word) for word in words)})[ \t]+{value}",
                "secret",
                hints=hints_for(words),
            )
            for kind, words in FLAG_WORDS.items()
        ),
        *(_program_flag(row) for row in PROGRAM_FLAGS),
        secret_pattern(
            "password",
            r"(?<![\w-])(?:docker|podman|nerdctl|buildah)[ \t]+login(?![\w-])"
            rf"[^\n]{{0,512}}?[ \t](?:-p[ \t]*|--password(?:[ \t]+|=))(?!-){VALUE}",
            "secret",
            hints=("login",),
        ),
    )


_ENV_VALUE = (
    r"(?P<vq>[\"'])?(?!\[REDACTED:|\s|=)"
    r"(?P<secret>(?(vq)[^\"'\r\n]+|[^\s\"'`,;&<>(){}]+))"
)
"""An env variable's value: quoted, or bare up to whitespace or a delimiter (a bracket is part of it, so a
value already partly masked is masked whole)."""


def _lexicon_kind(match: re.Match[str]) -> str | None:
    return secret_kind(match["name"], match["secret"])


def lexicon_assignments() -> tuple[SecretPattern, ...]:
    """Variables whose name the secret lexicon reads as a credential (`HMAC_KEY`, `LDAP_BIND_PW`, `NPM_AUTH`).

    In text only env-style names (upper case, `_` between words) count: `KEY=v` or `export KEY=v`, `"KEY": "v"`,
    and at the start of a line `APP_KEY: v` (a `_` required, so "AUTH: failed" stays prose); lower-case keys
    (`cache_key=`, `conn=42`) are logfmt fields, left to the generic patterns. A Kubernetes or ECS env entry,
    `name: K` then `value: v`, counts whatever the name's case.
    """
    name = r"(?P<name>[A-Z][A-Z0-9_]{0,80}+)"
    first = r"(?P<name>[A-Z](?<![A-Za-z0-9_.$-].)[A-Z0-9_]{0,80}+)"  # a class first: `re` skips ahead to it
    hints = LEXICON_HINTS
    return (
        secret_pattern(
            "secret",
            rf"{first}(?:=|[ \t]+=[ \t]*){_ENV_VALUE}",
            "secret",
            hints=hints,
            kind=_lexicon_kind,
        ),
        secret_pattern(
            "secret", rf"[\"']{name}[\"'][ \t]*:[ \t]*{_ENV_VALUE}", "secret", hints=hints, kind=_lexicon_kind
        ),
        secret_pattern(
            "secret",
            rf"^[ \t]*(?:-[ \t]+)?(?P<name>[A-Z][A-Z0-9]*+(?:_[A-Z0-9]++)++)[ \t]*:[ \t]*{_ENV_VALUE}",
            "secret",
            re.MULTILINE,
            hints=hints,
            kind=_lexicon_kind,
        ),
        secret_pattern(
            "secret",
            r"name[\"']?:[ \t]*[\"']?(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,80}+)[\"']?[ \t]*(?:,[ \t]*\r?\n?|\r?\n)"
            rf"[ \t]*[\"']?value[\"']?:[ \t]*{_ENV_VALUE}",
            "secret",
            hints=hints,
            kind=_lexicon_kind,
        ),
    )
