"""The shipped secret patterns, in the order they run: whole blocks and vendor formats before generic keys.

Each masks only the value: `password=[REDACTED:password]` keeps the key, a header keeps its scheme, a URL its user
and host. Which names and command flags hold a credential is the secret lexicon's (`secret_lexicon`, read in text by
`lexicon_patterns`); what one pattern is, `secret_pattern`; running them, `redactor`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable

from kernel.redaction.lexicon_patterns import cli_patterns, lexicon_assignments
from kernel.redaction.secret_lexicon import secret_kind
from kernel.redaction.secret_pattern import VALUE, SecretPattern
from kernel.redaction.secret_pattern import secret_pattern as _pattern


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


def _unless_working_directory(match: re.Match[str]) -> str | None:
    """A password, but for `; PWD=/app` in an env list joined with `; `: that is the working directory, not
    ODBC's `;PWD=` (see `secret_kind`)."""
    start = match.start()
    bare = match.string[start : start + 4].upper() == "PWD=" and match.string[start - 1 : start] in ("", " ", ";")
    return None if bare and secret_kind("PWD", match["secret"]) is None else "password"


def _assignments(
    name: str, key: str, hints: tuple[str, ...], kind: Callable[[re.Match[str]], str | None] | None = None
) -> tuple[SecretPattern, ...]:
    """A generic assignment whose key ends with `key`, in each of its forms.

    `k=v`, `k = v`, `"k": "v"` and `'k'='v'` anywhere; `k: v` only at the start of a line (YAML, env
    listings, HTTP headers) or of a curl header, so prose such as "invalid token: expired" stays
    intact; and Kubernetes/ECS env entries, `name: K` followed by `value: v`. `kind` reads each `k=v`.
    """
    key_name = rf"[A-Za-z0-9_.-]{{0,80}}?{key}"
    return (
        _pattern(
            name,
            rf"{key}(?:[\"']?(?:=|[ \t]+=[ \t]*)|[\"'][ \t]*:[ \t]*){VALUE}",
            "secret",
            hints=hints,
            kind=kind,
        ),
        _pattern(name, rf"^[ \t]*(?:-[ \t]+)?{key_name}[ \t]*:[ \t]*{VALUE}", "secret", re.MULTILINE, hints=hints),
        _pattern(name, rf"(?:-H|--header)[ \t]+[\"']?{key_name}[ \t]*:[ \t]*{VALUE}", "secret", hints=hints),
        _pattern(
            name,
            rf"name[\"']?:[ \t]*[\"']?{key_name}[\"']?[ \t]*(?:,[ \t]*\r?\n?|\r?\n)[ \t]*[\"']?value[\"']?:[ \t]*{VALUE}",
            "secret",
            hints=hints,
        ),
    )


_COOKIE_VALUE = re.compile(r"(?:^|;)[ \t]*[^=;\s]+=(?P<value>[^;]*)")
"""One `name=value` of a cookie list; its value is what is masked."""
_COOKIE_PAIR = r"[^\s=;\"',\\]++=[^\s;\"',\\]*+"
_COOKIE_OPENING = r"(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\[[ \t]*)?(?:\\?[\"'])?"
"""After the header's name: a closing quote (JSON-escaped or not), `:` or `=`, a JSON list's bracket, a quote."""


PEM_HEADER = r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
PEM_FOOTER = r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
PEM_RUN = r"(?:[A-Za-z0-9+/=]|\\/)++"
r"""Base64 of a key body; `\/` is JSON's escape of `/`."""
PEM_SEPARATOR = r"(?:[ \t\r\n]|\\[rn]|⏎)++"
r"""What people and loggers put between body lines: newlines, spaces, JSON's `\n` escape, or a formatter's ⏎."""
_PEM_LABELS = ("", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", "PGP ")


def _base64_prefix(text: str) -> str:
    """The base64 that every encoding of a text starting with `text` starts with (whole 3-byte groups only)."""
    raw = text.encode()
    return base64.b64encode(raw[: len(raw) // 3 * 3]).decode()


_PEM_IN_BASE64 = "|".join(_base64_prefix(f"-----BEGIN {label}PRIVATE KEY") for label in _PEM_LABELS)
"""A private key PEM, itself base64-encoded (a Kubernetes Secret's `tls.key`, a Helm value): `LS0tLS1CRUdJTi…`."""

DEFAULT_PATTERNS: tuple[SecretPattern, ...] = (
    # Whole PEM blocks first (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP, PKCS#8; real newlines or JSON `\n` escapes,
    # as in GCP service-account files, anything between when the footer is there). A block cut off before its
    # footer (a truncated line, a log record per line) loses its body up to the first thing that is not base64
    # or a separator.
    _pattern(
        "private_key",
        rf"{PEM_HEADER}(?:(?:(?!-----(?:BEGIN|END) )[\s\S]){{0,65536}}{PEM_FOOTER}"
        rf"|(?:(?:{PEM_SEPARATOR})?{PEM_RUN}(?:{PEM_SEPARATOR}{PEM_RUN})*+)?)",
        hints=("private key",),
    ),
    _pattern(
        "private_key", rf"(?<![A-Za-z0-9+/])(?:{_PEM_IN_BASE64})[A-Za-z0-9+/]*+={{0,2}}", hints=("ls0tls1crudjt",)
    ),
    _pattern(
        "aws_access_key_id",
        rf"A(?:KIA|SIA|BIA|CCA){_word(4)}[A-Z0-9]{{16}}(?![A-Za-z0-9])",
        hints=("akia", "asia", "abia", "acca"),
    ),
    _pattern(
        "aws_secret_access_key",
        r"[Ss](?i:ecret_?access_?key)[\"']?(?:[ \t]*(?:=>|[:=])[ \t]*|[ \t]+)[\"']?(?P<secret>[A-Za-z0-9/+]{40})"
        r"(?![A-Za-z0-9/+])",
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
    # Every xox?- kind (bot, user, app, config, refresh, the browser's xoxc- and its xoxd- cookie, URL-encoded).
    _pattern(
        "slack_token",
        rf"x{_word(1)}(?:ox[a-z]|oxe\.xox[a-z]|app)-(?=[A-Za-z0-9%-]*\d)[A-Za-z0-9%-]{{10,}}",
        hints=("xox", "xapp-"),
    ),
    _pattern("vault_token", rf"hv[sbr]\.{_word(4)}[A-Za-z0-9_-]{{20,}}{_END}", hints=("hvs.", "hvb.", "hvr.")),
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
    # scheme://user:password@host keeps the user and the host. The password ends at the last `@` that a host
    # follows (people do not percent-encode `@`, `/` or `#` in it; an `@` later in the path masks that much more);
    # `host:8080/path@x` is a port, not a password.
    _pattern(
        "url_password",
        r"://[^\s:/?#@\[\]\"'<>]{0,256}:(?!\d{1,5}(?:[/?#]|$))(?P<secret>[^\s\"'<>]{1,256})@"
        r"(?=[^\s@/?#\"'<>]*(?:[/?#\s\"'<>]|$))",
        "secret",
        re.MULTILINE,
        hints=("://",),
    ),
    _pattern(
        "azure_account_key",
        r"[AaSs](?<![A-Za-z0-9].)(?:(?<=[Aa])(?i:ccountkey)|(?<=[Ss])(?i:haredaccesskey))[ \t]*=[ \t]*"
        r"(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        "secret",
        hints=("accountkey", "sharedaccesskey"),
    ),
    *cli_patterns(),
    # Cookies: the whole `Cookie:` value (every cookie in it), a `Set-Cookie:` value up to its attributes.
    _pattern(
        "cookie",
        r"^[ \t]*(?:[<>][ \t]+)?(?:-[ \t]+)?(?i:cookie)[ \t]*:[ \t]*(?P<c>[^\r\n]+)",
        "c",
        re.MULTILINE,
        hints=("cookie",),
        each=_COOKIE_VALUE,
    ),
    _pattern(
        "cookie",
        r"^[ \t]*(?:[<>][ \t]+)?(?:-[ \t]+)?(?i:set-cookie)[ \t]*:[ \t]*(?P<s>[^\r\n;]+)",
        "s",
        re.M,
        hints=("cookie",),
        each=_COOKIE_VALUE,
    ),
    _pattern(
        "cookie",
        r"(?:(?:-H|--header)[ \t]+[\"']?|[\"'])(?i:set-cookie|cookie)[\"']?[ \t]*:[ \t]*[\"']?(?P<secret>[^\"'\r\n]+)",
        "secret",
        hints=("cookie",),
        each=_COOKIE_VALUE,
    ),
    _pattern(
        "cookie",
        r"curl(?<!\wcurl)\b(?:[^\nc]|c(?!url\b)){0,512}?[ \t](?:-b|--cookie)[ \t=]+[\"']?(?P<secret>[^\s\"'=;]+=[^\"'\r\n]+)",
        "secret",
        hints=("curl",),
        each=_COOKIE_VALUE,
    ),
    # Anywhere in a line, any case, `:` or `=`, quoted or JSON-escaped (`"cookie":"a=b; c=d"`, `cookie="a=b"`):
    # `name=value` pairs as RFC 6265 writes them (no blanks in a value), so the rest of a log line is kept.
    _pattern(
        "cookie",
        rf"(?<![A-Za-z0-9])(?<![Ss][Ee][Tt][-_])(?i:cookie){_COOKIE_OPENING}(?P<c>{_COOKIE_PAIR}(?:;[ \t]*{_COOKIE_PAIR})*+)",
        "c",
        hints=("cookie",),
        each=_COOKIE_VALUE,
    ),
    _pattern(
        "cookie",
        rf"(?<![A-Za-z0-9])(?i:set[-_]cookie){_COOKIE_OPENING}(?P<s>{_COOKIE_PAIR})",
        "s",
        hints=("cookie",),
        each=_COOKIE_VALUE,
    ),
    # Docker's config.json (`"auth": base64(user:password)`, identity tokens) and the Secret that carries it.
    _pattern(
        "docker_auth",
        r"[\"'](?i:auth|identitytoken|registrytoken)[\"'][ \t]*:[ \t]*[\"']"
        r"(?P<secret>(?=[^\"']*[A-Z0-9+/=])[A-Za-z0-9+/=._-]{12,})[\"']",
        "secret",
        hints=("auth", "identitytoken", "registrytoken"),
    ),
    _pattern(
        "docker_auth",
        r"\.docker(?:configjson|cfg)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<secret>[A-Za-z0-9+/=]{16,})",
        "secret",
        hints=(".docker",),
    ),
    # Generic assignments last; connection strings (`Password=...;`, `;PWD=...`, `PGPASSWORD=`) included.
    *_assignments("password", _PASSWORD_KEY, ("pass", "pwd"), _unless_working_directory),
    *_assignments("secret", _SECRET_KEY, ("secret", "sig")),
    *_assignments("token", _TOKEN_KEY, ("token",)),
    *_assignments("api_key", _API_KEY_KEY, ("key",)),
    *lexicon_assignments(),
)
"""The shipped patterns, in the order they run: whole blocks and vendor formats before generic keys."""
