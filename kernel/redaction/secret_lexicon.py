"""Where credentials live: names that hold one, values shaped like key material, command flags that take one.

Text patterns find `password=…` in prose; these rules also serve callers that know a value's position, such as a
Kubernetes env entry's `value` or the word after `-a` in `["redis-cli", "-a", "…"]`, which is masked whatever it
looks like. Everything here is plain scanning or a linear regex: names and values come from untrusted objects.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

NOT_A_SECRET = re.compile(
    r"\[REDACTED:[A-Za-z0-9_.-]+\]"  # already masked: keeps redaction idempotent
    r"|[\W_]*"  # no letters or digits at all: ****, ..., .*, ---
    r"|<[^<>]*>"  # <redacted>, <set to the key 'password' in secret 'db'>
    r"|\$\{[^{}]*\}|\$[A-Z_][A-Z0-9_]*|\{\{[^{}]*\}\}|%s"  # ${VAR}, $VAR, {{ .Values.x }}, %s
    r"|(?i:true|false|null|none|nil|undefined|redacted|masked|hidden|str|bytes|secretstr|optional)"
)
"""Values that are plainly not secrets: a masked value, a placeholder, a reference or a type name."""

_KINDS = {
    "password": ("PW", "PWD", "PASS", "PASSWD", "PASSWORD", "PASSWORDS", "PASSPHRASE", "PASSCODE"),
    "token": ("TOKEN",),
    "api_key": ("KEY", "APIKEY", "ACCESSKEY", "PRIVATEKEY"),
    "cookie": ("COOKIE", "COOKIES"),
    "secret": (
        "SECRET", "SECRETS", "CRED", "CREDS", "CREDENTIAL", "CREDENTIALS", "AUTH", "CERT", "CERTS", "CERTIFICATE",
        "SALT", "PEPPER", "DSN", "CONN", "CONNSTR", "LICENSE", "LICENCE", "PRIVATE", "SESSION", "SIGNATURE", "PSK",
    ),
}  # fmt: skip
SECRET_WORDS: dict[str, str] = {word: kind for kind, words in _KINDS.items() for word in words}
"""A name segment that says its value is a credential, and the kind of marker it gets."""
_SECRET_ENDINGS = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "APIKEY", "CREDENTIALS")
"""Long words that mark a segment written without separators too: DBPASSWORD, CLIENTSECRET, AUTHTOKEN."""
QUALIFIERS = frozenset({
    "PATH", "FILE", "FILES", "FILENAME", "DIR", "DIRECTORY", "NAME", "NAMES", "COUNT", "LIMIT", "MAX", "MIN", "LEN",
    "LENGTH", "SIZE", "BITS", "TTL", "TIMEOUT", "EXPIRY", "EXPIRES", "EXPIRATION", "LIFETIME", "AGE", "INTERVAL",
    "ENABLED", "ENABLE", "DISABLED", "DISABLE", "REQUIRED", "MODE", "TYPE", "KIND", "ALGORITHM", "ALG", "METHOD",
    "HEADER", "FORMAT", "VERSION", "LEVEL", "HOST", "PORT", "URL", "URI", "ENDPOINT", "DOMAIN", "REGION", "PROVIDER",
    "ISSUER", "AUDIENCE", "PREFIX", "SUFFIX", "USER", "USERNAME", "STDIN", "POLICY", "STRATEGY", "STORE", "BACKEND",
    "DRIVER", "SECURE", "HTTPONLY", "SAMESITE", "IP",
})  # fmt: skip
"""A last segment that makes the value something about a secret, not the secret: TOKEN_TTL, CERTIFICATE_PATH."""
_PUBLIC = frozenset({"CA", "PUBLIC", "ROOT"})
_NOT_SECRET_AFTER = {
    "KEY": frozenset({
        "ROUTING", "PARTITION", "SORT", "PRIMARY", "FOREIGN", "CACHE", "IDEMPOTENCY", "SHARD", "OBJECT", "LOOKUP",
        "RANGE", "DEDUP", "MESSAGE", "GROUP", "PUBLIC", "PUBLISHABLE", "SITE",
    }),
    "CERT": _PUBLIC,
    "CERTIFICATE": _PUBLIC,
}  # fmt: skip
"""A lookup key (ROUTING_KEY) or public material (PUBLIC_KEY, CA_CERT) is not a credential."""

_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
"""A name's words: upper runs (an acronym ends before a capital that starts a word), capitalised or lower words,
digit runs. Backtracks at most one character per upper run: linear."""
_PATH = re.compile(r"/[A-Za-z0-9._/-]*+")


def name_segments(name: str) -> list[str]:
    """A name's words, upper-cased: split on `_`, `-`, `.`, camelCase and digits. `hmacKey` → HMAC, KEY;
    `APIKey` → API, KEY; `LDAP_BIND_PW2` → LDAP, BIND, PW, 2; OAuth is one word (`OAuthToken` → OAUTH, TOKEN)."""
    return [word.upper() for word in _SEGMENT.findall(name.replace("OAuth", "Oauth"))]


def _word_kind(segment: str) -> str | None:
    kind = SECRET_WORDS.get(segment)
    if kind is None and len(segment) > 6:
        ending = next((e for e in _SECRET_ENDINGS if segment.endswith(e)), None)
        kind = SECRET_WORDS[ending] if ending else None
    return kind


def secret_kind(name: str, value: str = "") -> str | None:
    """The kind of credential a variable named `name` holds (password, token, api_key, cookie, secret), or None.

    Words are matched whole (`MONKEY` is not `KEY`, `AUTHOR` not `AUTH`, `PASSIVE` not `PASS`); a last word that
    qualifies the name (`KEY_COUNT`, `CERTIFICATE_PATH`, `TOKEN_TTL`) makes it no credential, as do lookup keys
    and public material (`ROUTING_KEY`, `PUBLIC_KEY`, `CA_CERT`). Bare `PWD` holding an absolute path is the
    shell's working directory, present in every env dump; `PWD` with any other value, and `DB_PWD`, are passwords.
    """
    if name == "PWD" and _PATH.fullmatch(value):
        return None
    return _name_kind(name)


@functools.lru_cache(maxsize=4096)
def _name_kind(name: str) -> str | None:
    """`secret_kind` of a name, remembered: a log repeats the same few names on every line."""
    segments = name_segments(name)
    if not segments or segments[-1] in QUALIFIERS:
        return None
    for index in range(len(segments) - 1, -1, -1):
        kind = _word_kind(segments[index])
        if kind is not None and not (index and segments[index - 1] in _NOT_SECRET_AFTER.get(segments[index], ())):
            return kind
    return None


def hints_for(words: Iterable[str]) -> tuple[str, ...]:
    """The fewest lower-case words one of which every text holding any of `words` contains (PASS for PASSWORD)."""
    lowered = {word.lower() for word in words}
    return tuple(sorted(w for w in lowered if not any(other != w and other in w for other in lowered)))


LEXICON_HINTS = hints_for([*SECRET_WORDS, "SIG", "LICEN"])
"""What every name `secret_kind` accepts contains, lower-cased: a redactor's pre-check. Each hint is one scan of
the text, so shorter words shared with other patterns stand for longer ones (SIG for SIGNATURE)."""

_HEX = frozenset("0123456789abcdefABCDEF")
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")


def _char_class(char: str) -> int:
    return 0 if char.isdigit() else 1 if char.islower() else 2 if char.isupper() else 3


def looks_like_key_material(value: str) -> bool:
    """A single token shaped like generated key material: hex of 32 characters or more (a 40-character one is a
    git commit, not a key), or base64/base64url of 20 or more with both cases whose characters change class
    (digit, lower, upper, symbol) at least every third character, as random text does and words, names, versions
    and paths (`/opt/MyApp/Config`) do not. In one case it must be a run of 24 or more letters and digits, 4 or more of each, changing
    at least every fourth character: a UUID or a pod name (`checkout-7d9f8c6b5-x2x9k`) has dashes."""
    token = value.strip()
    scheme, colon, rest = token.partition(":")
    if colon and scheme in ("base64", "hex"):  # Laravel's APP_KEY=base64:…
        token = rest
    body = token.rstrip("=")
    if len(token) - len(body) > 2 or not 20 <= len(body) <= 16384:
        return False
    if all(char in _HEX for char in body):
        return len(body) >= 32 and len(body) != 40 and not body.isdigit() and not body.isalpha()
    if not all(char in _BASE64 for char in body):
        return False
    classes = [_char_class(char) for char in body]
    present = set(classes)
    changes = sum(1 for a, b in itertools.pairwise(classes) if a != b)
    if {1, 2} <= present:  # a path has a `/` every few characters, base64 one in 32
        return changes * 3 >= len(body) and classes.count(3) * 8 <= len(body)
    digits = classes.count(0)
    return len(body) >= 24 and 3 not in present and 4 <= digits <= len(body) - 4 and changes * 4 >= len(body)


@dataclass(frozen=True, slots=True)
class ProgramFlag:
    """A short flag that takes a credential after particular programs only (elsewhere `-p` is a port, `-a` "all").

    `glued`: the value may be attached (`-pSECRET`); `spaced`: it may be the next word (`-a SECRET`).
    `user_first`: the value is `user:password` and the user is kept. `hints`: one of them is in every program's name.
    """

    hints: tuple[str, ...]
    programs: tuple[str, ...]
    flags: tuple[str, ...]
    kind: str
    glued: bool
    spaced: bool
    user_first: bool = False


MYSQL_TOOLS = ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mysqlpump", "mysqlsh",
               "mariadb", "mariadb-dump", "mariadb-admin")  # fmt: skip
_LDAP_TOOLS = ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare")
_MONGO_TOOLS = ("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport")
PROGRAM_FLAGS = (
    # mysql's `-p db` prompts for the password (db is the database), and redis-cli's `-p` is a port
    ProgramFlag(("mysql", "mariadb"), MYSQL_TOOLS, ("-p",), "password", glued=True, spaced=False),
    ProgramFlag(("sshpass",), ("sshpass",), ("-p",), "password", glued=True, spaced=True),
    ProgramFlag(("redis-cli", "keydb-cli"), ("redis-cli", "keydb-cli"), ("-a",), "password", glued=False, spaced=True),
    ProgramFlag(("ldap",), _LDAP_TOOLS, ("-w",), "password", glued=True, spaced=True),
    ProgramFlag(("mongo",), _MONGO_TOOLS, ("-p",), "password", glued=False, spaced=True),
    ProgramFlag(("curl",), ("curl",), ("-u", "--user"), "basic_auth", glued=False, spaced=True, user_first=True),
)
"""Per-program credential flags, for command lines in text and for argument lists alike."""
FLAG_WORDS = {
    "password": ("password", "passwd", "pass", "pwd", "passphrase"),
    "token": ("token",),
    "secret": ("secret",),
    "api_key": ("api-key", "apikey", "access-key", "secret-key"),
}
"""Long flags that take a credential in any program when their name ends with one of these (`--db-password`,
`--client-secret`), never `--no-…`; `--password-file` and `--token-ttl` end otherwise."""


def long_flag_kind(flag: str) -> str | None:
    """The credential kind a long flag (`--db-password`) takes, or None (`--password-stdin`, `--no-password`)."""
    name = flag.lower()
    if not name.startswith("--") or name.startswith("--no-"):
        return None
    for kind, words in FLAG_WORDS.items():
        if any(name[2:] == word or name.endswith("-" + word) for word in words):
            return kind
    return None


def marker(kind: str) -> str:
    """What a secret of this kind is replaced with."""
    return f"[REDACTED:{kind}]"


def masked_env_value(name: str, value: str, redact: Callable[[str], str]) -> str:
    """An env variable's literal value as it may be shown: masked whole when the name holds a credential or the
    value looks like key material, else with whatever `redact` finds in it (a URL's password, a vendor token)."""
    if NOT_A_SECRET.fullmatch(value):
        return value
    kind = secret_kind(name, value) or ("key_material" if looks_like_key_material(value) else None)
    return marker(kind) if kind else redact(value)


def masked_argv(argv: Sequence[str], redact: Callable[[str], str]) -> list[str]:
    """A command given as a list of words (a container's command and args, an exec probe) as it may be shown.

    The word after a credential flag is masked whole, whatever it holds (`["redis-cli", "-a", "s3cr3t"]`); a
    glued value after its program's flag too (`mysql -pSECRET`). Program flags apply after that program's name,
    wrappers before it included (`timeout 5 redis-cli -a …`). Any other word that looks like key material is
    masked; the rest goes through `redact`, which reads shell scripts (`sh -c "…"`) and headers (`-H 'Authorization: …'`).
    """
    shown: list[str] = []
    flags: dict[str, ProgramFlag] = {}
    pending: ProgramFlag | str | None = None
    for word in argv:
        if pending is not None:
            shown.append(_masked_value(word, pending))
            pending = None
            continue
        program = word.rsplit("/", 1)[-1]
        if any(program in row.programs for row in PROGRAM_FLAGS):
            flags = {flag: row for row in PROGRAM_FLAGS if program in row.programs for flag in row.flags}
        flag, equals, value = word.partition("=")
        row = flags.get(word)
        if row is not None and row.spaced:
            shown.append(word)
            pending = row
        elif equals and flag.startswith("--") and (taker := flags.get(flag) or long_flag_kind(flag)):
            shown.append(f"{flag}={_masked_value(value, taker)}")
        elif (kind := long_flag_kind(word)) is not None:
            shown.append(word)
            pending = kind
        elif (glued := _glued(word, flags)) is not None:
            shown.append(glued[0] + _masked_value(word[len(glued[0]) :], glued[1]))
        else:
            shown.append(marker("key_material") if looks_like_key_material(word) else redact(word))
    return shown


def _glued(word: str, flags: dict[str, ProgramFlag]) -> tuple[str, ProgramFlag] | None:
    """The short program flag `word` starts with, its value attached (`-pSECRET`), if any."""
    for flag, row in flags.items():
        if row.glued and len(word) > len(flag) and word.startswith(flag) and not flag.startswith("--"):
            return flag, row
    return None


def _masked_value(value: str, taken_by: ProgramFlag | str) -> str:
    """A flag's value masked, whatever it holds; a `user:password` keeps its user, a placeholder stays."""
    if NOT_A_SECRET.fullmatch(value):
        return value
    if isinstance(taken_by, str):
        return marker(taken_by)
    if taken_by.user_first:
        user, colon, password = value.partition(":")
        return f"{user}:{marker(taken_by.kind)}" if colon and password and "[REDACTED:" not in value else value
    return marker(taken_by.kind)
