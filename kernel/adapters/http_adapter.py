"""What the model adapters share besides retries: an HTTP client they may own, URLs, settings.

Kept apart from `http_retry` so each module holds one concept.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Self

import httpx


class OwnedHttpClient:
    """An adapter's HTTP client: the one it was given, or one it creates on first use and closes."""

    def __init__(self, client: httpx.AsyncClient | None) -> None:
        self._client = client
        self._owns_client = client is None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient()
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client if this adapter created it; a client passed in is the caller's."""
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class HttpModelAdapter(OwnedHttpClient):
    """The state every HTTP model adapter has: its model name, endpoint, key, and whether tools go out natively."""

    def __init__(
        self,
        client: httpx.AsyncClient | None,
        *,
        model: str,
        native_tools: bool,
        url: str,
        api_key: str | None,
        api_key_env: str | None,
        key_variables: str,
    ) -> None:
        super().__init__(client)
        self._model = model
        self._native = native_tools
        self._url = url
        self._api_key_env = api_key_env
        self._has_key = bool(api_key)
        self._auth_hint = key_hint(sent=bool(api_key), source=api_key_env, variables=key_variables)

    @property
    def model(self) -> str:
        """The model name sent with each request."""
        return self._model

    @property
    def url(self) -> str:
        """Where each request is POSTed."""
        return self._url

    @property
    def has_key(self) -> bool:
        """Whether requests carry an API key (a local server may need none)."""
        return self._has_key

    @property
    def api_key_env(self) -> str | None:
        """The environment variable the key came from, when known."""
        return self._api_key_env

    @property
    def native_tools(self) -> bool:
        """Whether tools are sent as native definitions; False means the text protocol (configured, or
        after an endpoint rejected native tools)."""
        return self._native


def key_hint(*, sent: bool, source: str | None, variables: str) -> str:
    """What to check when an endpoint refuses the request (401/403): the variable the key came from, when
    known, or the `variables` that would hold one when no key was sent."""
    if not sent:
        return f"No API key was sent: set {variables}."
    if source:
        return f"The key in {source} was refused: check that variable (a typo, a revoked key, another endpoint's key)."
    return "The API key was refused: check it."


def join_url(base_url: str, path: str) -> str:
    """`base_url` and `path` joined with exactly one slash."""
    return f"{base_url.rstrip('/')}/{path.lstrip('/')}"


def first_env(environ: Mapping[str, str], *names: str) -> str | None:
    """The first of `names` set to a non-blank value in `environ`, stripped; None when none is."""
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def require_env(environ: Mapping[str, str], *names: str, purpose: str) -> str:
    """Like `first_env`, but a missing setting is a `ValueError` that says which variable to set."""
    value = first_env(environ, *names)
    if value is None:
        alternatives = " or ".join(names)
        raise ValueError(f"{alternatives} is not set. Set it to {purpose}.")
    return value
