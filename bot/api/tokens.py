"""The API's bearer tokens: `name:token` pairs from the environment, and who a request's `Authorization` header is.

A presented token is checked against every configured one, in constant time and without stopping at a match, so
neither the answer's timing nor the number of tokens tried says which token (or how much of one) was right. Only
digests are kept: the tokens themselves are not held past start-up.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass

from bot.api.settings import ApiSettings

MIN_TOKEN_CHARS = 16
MAX_NAME_CHARS = 40
NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-.")
"""A client's name: lower case, so it never reads as a Slack user id (`U…`) wherever requesters are shown."""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True)
class ApiTokens:
    """The configured clients: each name with its token's digest."""

    clients: tuple[tuple[str, bytes], ...]

    @classmethod
    def parse(cls, text: str, variable: str) -> ApiTokens:
        """The clients in `text` (`name:token,name:token`, from `variable`); a ValueError that names what to fix,
        never a token."""
        clients: dict[str, bytes] = {}
        for number, pair in enumerate((part.strip() for part in text.split(",") if part.strip()), start=1):
            name, colon, token = (side.strip() for side in pair.partition(":"))
            where = f"{variable}, pair {number}"
            if not colon or not name or not token:
                raise ValueError(f"{where} is not `name:token`: write e.g. `claude:$(openssl rand -hex 32)`")
            if len(name) > MAX_NAME_CHARS or not set(name) <= NAME_CHARACTERS or not name[0].isalnum():
                raise ValueError(
                    f"{where}: the name must be 1-{MAX_NAME_CHARS} lower-case letters, digits, `_`, `-` or `.`, "
                    "starting with a letter or digit"
                )
            if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
                raise ValueError(
                    f"{where} ({name}): the token must be {MIN_TOKEN_CHARS}+ characters without spaces "
                    "(e.g. `openssl rand -hex 32`)"
                )
            if name in clients:
                raise ValueError(f"{where}: the name {name} is given twice; each client needs a name of its own")
            if _digest(token) in clients.values():
                raise ValueError(f"{where} ({name}): the token is another client's too; give each its own")
            clients[name] = _digest(token)
        if not clients:
            raise ValueError(
                f"[api] is enabled but {variable} holds no tokens: set it to `name:token` pairs, e.g. "
                f"`{variable}=claude:$(openssl rand -hex 32)`, or set [api] enabled = false"
            )
        return cls(tuple(clients.items()))

    @classmethod
    def from_env(cls, settings: ApiSettings, environ: Mapping[str, str] = os.environ) -> ApiTokens:
        """The clients configured in `settings.tokens_env`; a ValueError saying what to set when there are none."""
        return cls.parse(environ.get(settings.tokens_env, ""), settings.tokens_env)

    @property
    def names(self) -> tuple[str, ...]:
        """The clients' names, as configured."""
        return tuple(name for name, _ in self.clients)

    def client(self, authorization: str) -> str | None:
        """The name of the client whose token `Authorization: Bearer <token>` carries; None for a missing, malformed
        or unknown one. Every configured token is compared, each in constant time."""
        scheme, _, credentials = authorization.strip().partition(" ")
        presented = _digest(credentials.strip())
        found = None
        for name, digest in self.clients:
            if hmac.compare_digest(presented, digest) and found is None:
                found = name
        return found if scheme.lower() == "bearer" else None
