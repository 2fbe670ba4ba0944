"""Secret redaction applied to every observation before the model, Slack, logs or a trace see it.

Tool output routinely carries credentials (env dumps, DSNs, headers, key files); ordered, compiled-once patterns mask only the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

_NAME = re.compile(r"[A-Za-z0-9_.-]+")

_NOT_A_SECRET = re.compile(
    r"\[REDACTED:[A-Za-z0-9_.-]+\]"  # already masked: keeps redaction idempotent
    r"|[\W_]*"  # no letters or digits at all: ****, ..., .*, ---
    r"|<[^<>]*>"  # <redacted>, <set to the key 'password' in secret 'db'>
    r"|\$\{[^{}]*\}|\$[A-Z_][A-Z0-9_]*|\{\{[^{}]*\}\}|%s"  # ${VAR}, $VAR, {{ .Values.x }}, %s
    r"|(?i:true|false|null|none|nil|undefined|redacted|masked|hidden|str|bytes|secretstr|optional)"
)
"""Values that are plainly not secrets: a masked value, a placeholder, a reference or a type name."""


@runtime_checkable
class Redactor(Protocol):
    """Anything that masks secrets in a text; it must be idempotent and never raise."""

    def redact(self, text: str) -> str:
        """The text with every secret it recognises replaced by a marker."""
        ...


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

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"pattern name {self.name!r} must match {_NAME.pattern}")
        known = self.regex.groupindex if isinstance(self.group, str) else range(self.regex.groups + 1)
        if self.group not in known:
            raise ValueError(f"pattern {self.name!r} has no group {self.group!r}")

    @property
    def marker(self) -> str:
        """What a secret of this kind is replaced with."""
        return f"[REDACTED:{self.name}]"


def _pattern(name: str, regex: str, group: int | str = 0, flags: int = 0, *, hints: tuple[str, ...]) -> SecretPattern:
    return SecretPattern(name, re.compile(regex, flags), group, hints)


# Every pattern starts with a literal or a character class so `re` can skip ahead quickly; word
# boundaries are therefore checked just after that prefix. `_word(n)`: the character before the
# `n` characters just matched is not a token character.
def _word(n: int) -> str:
    return rf"(?<![A-Za-z0-9_-].{{{n}}})"


_END = r"(?![A-Za-z0-9_-])"

# A generic key ends with a keyword that starts at a word or camelCase boundary (`DB_PASSWORD`,
# `dbPassword`, `spring.datasource.password`), never mid-word (`bypass`, `OLDPWD`); checked after
# the keyword's first letter.
_BOUNDARY = r"(?:(?<![A-Za-z0-9].)|(?<=[a-z0-9][A-Z]))"
_PASSWORD_KEY = rf"[Pp]{_BOUNDARY}(?:(?i:assword|gpassword|asswd|assphrase)|(?:(?<=[_.;-].)|(?<=; .))(?i:ass|wd))"
_SECRET_KEY = rf"[Ss]{_BOUNDARY}(?:(?i:ecret(?:[_.-]?key(?:[_.-]?base)?)?|ignature)|(?<=[?&].)(?i:ig))"
_TOKEN_KEY = rf"[Tt]{_BOUNDARY}(?i:oken)"
_API_KEY_KEY = (
    rf"[AaPpEeSsMm]{_BOUNDARY}(?:(?:(?<=[Aa])(?i:pi|ccess|uth)|(?<=[Ee])(?i:ncryption)|(?<=[Ss])(?i:igning)"
    r"|(?<=[Mm])(?i:aster))[_.-]?(?i:key)|(?<=[Pp])(?i:rivate[_.-]?key(?:[_.-]?id)?))"
)
# The value: quoted (up to the closing quote) or bare (up to whitespace or a delimiter); never an
# existing marker, never starting with a blank, never kubectl's "16 bytes" size listing.
_VALUE = (
    r"(?P<vq>[\"'])?(?!\[REDACTED:|\s|\d+ bytes\b)"
    r"(?P<secret>(?(vq)[^\"'\r\n]+|[^\s\"'`,;&<>(){}\[\]]+))"
)


def _assignments(name: str, key: str, hints: tuple[str, ...]) -> tuple[SecretPattern, ...]:
    """A generic assignment whose key ends with `key`, in each of its forms.

    `k=v`, `k = v`, `"k": "v"` and `'k'='v'` anywhere; `k: v` only at the start of a line (YAML, env
    listings, HTTP headers) or of a curl header, so prose such as "invalid token: expired" stays
    intact; and Kubernetes/ECS env entries, `name: K` followed by `value: v`.
    """
    key_name = rf"[A-Za-z0-9_.-]{{0,80}}?{key}"
    return (
        _pattern(name, rf"{key}(?:[\"']?(?:=|[ \t]+=[ \t]*)|[\"'][ \t]*:[ \t]*){_VALUE}", "secret", hints=hints),
        _pattern(name, rf"^[ \t]*(?:-[ \t]+)?{key_name}[ \t]*:[ \t]*{_VALUE}", "secret", re.MULTILINE, hints=hints),
        _pattern(name, rf"(?:-H|--header)[ \t]+[\"']?{key_name}[ \t]*:[ \t]*{_VALUE}", "secret", hints=hints),
        _pattern(
            name,
            rf"name[\"']?:[ \t]*[\"']?{key_name}[\"']?[ \t]*(?:,[ \t]*\r?\n?|\r?\n)[ \t]*[\"']?value[\"']?:[ \t]*{_VALUE}",
            "secret",
            hints=hints,
        ),
    )


_PEM_HEADER = r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_FOOTER = r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"

DEFAULT_PATTERNS: tuple[SecretPattern, ...] = (
    # Whole PEM blocks first (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP, PKCS#8; real newlines or JSON
    # `\n` escapes, as in GCP service-account files); a block cut off before its footer loses its body.
    _pattern(
        "private_key",
        rf"{_PEM_HEADER}(?:(?:(?!-----(?:BEGIN|END) )[\s\S]){{0,65536}}{_PEM_FOOTER}|(?:[A-Za-z0-9+/=\r\n\\]*[A-Za-z0-9+/=\\])?)",
        hints=("private key",),
    ),
    _pattern(
        "aws_access_key_id",
        rf"A(?:KIA|SIA|BIA|CCA){_word(4)}[A-Z0-9]{{16}}(?![A-Za-z0-9])",
        hints=("akia", "asia", "abia", "acca"),
    ),
    _pattern(
        "aws_secret_access_key",
        r"[Ss](?i:ecret_?access_?key)[\"']?[ \t]*(?:=>|[:=])[ \t]*[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "secret",
        hints=("access",),
    ),
    _pattern(
        "github_token",
        rf"g(?:h[pousr]_{_word(4)}[A-Za-z0-9]{{36,}}|ithub_pat_{_word(11)}[A-Za-z0-9_]{{22,}}){_END}",
        hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _pattern(
        "gitlab_token",
        rf"(?:gl{_word(2)}(?:pat|dt|rt|ptt|ft|imt|agent|cbt|soat|ffct|oas|wt)-[A-Za-z0-9_.-]{{20,}}"
        rf"|GR1348941{_word(9)}[A-Za-z0-9_-]{{20,}})",
        hints=("gl", "gr1348941"),
    ),
    _pattern(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{8,})",
        "secret",
        hints=("hooks.slack.com",),
    ),
    _pattern(
        "slack_token", rf"x{_word(1)}(?:ox[abposr]|oxe\.xox[bp]|oxe|app)-[A-Za-z0-9-]{{10,}}", hints=("xox", "xapp-")
    ),
    _pattern(
        "stripe_key",
        rf"[rsw](?:(?<=[rs])k_(?:live|test)_{_word(8)}[A-Za-z0-9]{{10,}}|(?<=w)hsec_{_word(6)}[A-Za-z0-9+/=]{{24,}})",
        hints=("k_live_", "k_test_", "whsec_"),
    ),
    _pattern("anthropic_api_key", rf"sk-ant-{_word(7)}[A-Za-z0-9_-]{{20,}}", hints=("sk-ant-",)),
    # `sk-` + 20 plain alphanumerics (legacy, compatible providers) or a typed key (`sk-proj-...`);
    # words such as "task-runner" or "disk-usage" never start at `sk-`.
    _pattern(
        "openai_api_key",
        rf"sk-{_word(3)}(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{{20,}}|[A-Za-z0-9]{{20}}[A-Za-z0-9_-]*)",
        hints=("sk-",),
    ),
    _pattern("google_api_key", rf"AIza{_word(4)}[A-Za-z0-9_-]{{35}}{_END}", hints=("aiza",)),
    _pattern("google_oauth_secret", rf"GOCSPX-{_word(7)}[A-Za-z0-9_-]{{28}}{_END}", hints=("gocspx-",)),
    _pattern("google_oauth_token", rf"ya29\.{_word(5)}[A-Za-z0-9_-]{{20,}}", hints=("ya29.",)),
    _pattern("npm_token", rf"npm_{_word(4)}[A-Za-z0-9]{{36,}}{_END}", hints=("npm_",)),
    _pattern("sendgrid_api_key", rf"SG\.{_word(3)}[A-Za-z0-9_-]{{16,}}\.[A-Za-z0-9_-]{{16,}}", hints=("sg.",)),
    _pattern("huggingface_token", rf"hf_{_word(3)}[A-Za-z0-9]{{34,}}{_END}", hints=("hf_",)),
    _pattern("jwt", rf"eyJ{_word(3)}[A-Za-z0-9_-]{{5,}}\.ey[A-Za-z0-9_-]{{5,}}\.[A-Za-z0-9_-]*", hints=("eyj",)),
    # Header credentials keep the scheme: `Authorization: Bearer [REDACTED:authorization]`.
    _pattern(
        "authorization",
        r"[Aa](?i:uthorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?i:bearer|basic|token|bot|apikey|sso-key|negotiate|ntlm)[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]+)",
        "secret",
        hints=("authorization",),
    ),
    _pattern(
        "bearer_token",
        r"[Bb](?<![A-Za-z0-9].)(?i:earer)[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)",
        "secret",
        hints=("bearer",),
    ),
    # scheme://user:password@host keeps the user and the host.
    _pattern(
        "url_password", r"://[^\s:/?#@\[\]\"'<>]{0,256}:(?P<secret>[^\s/?#@\[\]\"'<>]+)@", "secret", hints=("://",)
    ),
    _pattern(
        "basic_auth",
        r"curl(?<!\wcurl)\b(?:[^\nc]|c(?!url\b)){0,512}?[ \t](?:-u|--user)[ \t=]+[\"']?[^\s:\"']{1,256}:(?P<secret>[^\s\"']+)",
        "secret",
        hints=("curl",),
    ),
    _pattern(
        "azure_account_key",
        r"[AaSs](?<![A-Za-z0-9].)(?:(?<=[Aa])(?i:ccountkey)|(?<=[Ss])(?i:haredaccesskey))[ \t]*=[ \t]*"
        r"(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        "secret",
        hints=("accountkey", "sharedaccesskey"),
    ),
    # Generic assignments last; connection strings (`Password=...;`, `;PWD=...`, `PGPASSWORD=`) included.
    *_assignments("password", _PASSWORD_KEY, ("pass", "pwd")),
    *_assignments("secret", _SECRET_KEY, ("secret", "sig")),
    *_assignments("token", _TOKEN_KEY, ("token",)),
    *_assignments("api_key", _API_KEY_KEY, ("key",)),
)
"""The shipped patterns, in the order they run: whole blocks and vendor formats before generic keys."""


def _replacer(pattern: SecretPattern) -> Callable[[re.Match[str]], str]:
    marker, group = pattern.marker, pattern.group

    def replace(match: re.Match[str]) -> str:
        whole = match.group(0)
        start, end = match.span(group)
        if start == end or _NOT_A_SECRET.fullmatch(match.string, start, end):
            return whole
        offset = match.start()
        return whole[: start - offset] + marker + whole[end - offset :]

    return replace


class PatternRedactor:
    """A `Redactor` that runs its patterns in order, replacing each secret with `[REDACTED:<name>]`.

    Markers and placeholders (`****`, `${VAR}`, `<redacted>`) are left alone, so `redact` is idempotent.
    """

    __slots__ = ("_hints", "_patterns", "_steps")

    def __init__(self, patterns: Iterable[SecretPattern] = DEFAULT_PATTERNS) -> None:
        self._patterns = tuple(patterns)
        self._steps = tuple((frozenset(p.hints), p.regex, _replacer(p)) for p in self._patterns)
        self._hints = tuple({h for p in self._patterns for h in p.hints})

    @property
    def patterns(self) -> tuple[SecretPattern, ...]:
        """The patterns, in the order they run."""
        return self._patterns

    def redact(self, text: str) -> str:
        """The text with every recognised secret replaced by its marker; the rest is unchanged."""
        lowered = text.lower()
        present = {h for h in self._hints if h in lowered}
        for hints, regex, replace in self._steps:
            if not hints or not hints.isdisjoint(present):
                text = regex.sub(replace, text)
        return text

    def with_patterns(self, *extra: SecretPattern) -> PatternRedactor:
        """A new redactor that runs `extra` first (so a specific custom format wins), then these patterns."""
        return PatternRedactor((*extra, *self._patterns))

    def __repr__(self) -> str:
        return f"PatternRedactor({[p.name for p in self._patterns]!r})"


DEFAULT_REDACTOR = PatternRedactor()
"""The redactor every observation goes through unless a deployment configures its own."""
