"""The authenticated GitHub REST client one repository's readers share: headers, GETs, and failures worded with advice.

The contents and compare reads (`github.py`) and the history reads (tags, merges, deployments, releases) use it alike.
"""

from __future__ import annotations

import os
import re
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from kernel import ToolFailure
from opsagent_tools.bounded_json import load_json

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_TOKEN_ENV = "GITHUB_TOKEN"
DEFAULT_HTTP_TIMEOUT = 10.0
API_VERSION = "2022-11-28"
JSON_MEDIA = "application/vnd.github+json"
FULL_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
ENTERPRISE_API_PATH = "/api/v3"


def repository_web_url(api_url: str, full_name: str) -> str:
    """A repository's page for people from the API's URL: https://github.com/owner/name for api.github.com, else the
    Enterprise host with `/api/v3` dropped; never with a user or password the API URL may carry."""
    parts = urlsplit(api_url.rstrip("/"))
    if parts.hostname == "api.github.com":
        return f"https://github.com/{full_name}"
    host = f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname or ""
    return f"{parts.scheme}://{host}{parts.path.removesuffix(ENTERPRISE_API_PATH)}/{full_name}"


class GitHubApi:
    """One repository's API on github.com or GitHub Enterprise; the token is read from `token_env` at each call."""

    def __init__(
        self,
        full_name: str,
        *,
        api_url: str = DEFAULT_API_URL,
        token_env: str = DEFAULT_TOKEN_ENV,
        timeout: float = DEFAULT_HTTP_TIMEOUT,
    ) -> None:
        if not FULL_NAME.match(full_name) or ".." in full_name:
            raise ValueError(f"GitHub repository must be 'owner/name', got {full_name!r}")
        self.full_name = full_name
        self.api_url = api_url.rstrip("/")
        self.token_env = token_env
        self.timeout = timeout

    @property
    def web_url(self) -> str:
        """The repository's page for people: https://github.com/owner/name, or the Enterprise host's."""
        return repository_web_url(self.api_url, self.full_name)

    def client(self) -> httpx.AsyncClient:
        """A connection pool for the requests of one call; close it when the call ends."""
        return httpx.AsyncClient(base_url=self.api_url, timeout=self.timeout, follow_redirects=True)

    def headers(self, accept: str = JSON_MEDIA) -> dict[str, str]:
        """The API version, the media type and, when the environment holds one, the token."""
        headers = {"Accept": accept, "X-GitHub-Api-Version": API_VERSION, "User-Agent": "opsagent"}
        token = os.environ.get(self.token_env, "").strip()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    async def get(
        self,
        client: httpx.AsyncClient,
        suffix: str,
        *,
        ref: str | None = None,
        params: dict[str, str] | None = None,
        accept: str = JSON_MEDIA,
    ) -> httpx.Response:
        """GET under the repository; 200, 404 and 422 come back, anything else is a `ToolFailure` with advice."""
        if ref and ref != "HEAD":  # without a ref GitHub reads the default branch
            params = {**(params or {}), "ref": ref}
        url = f"/repos/{self.full_name}{suffix}"
        try:
            resp = await client.get(url, params=params, headers=self.headers(accept))
        except httpx.TimeoutException:
            raise ToolFailure(
                f"GitHub did not answer within {self.timeout:g} s ({self.full_name}).",
                hint="Try again, or use other evidence (metrics, logs) if GitHub is slow.",
            ) from None
        except httpx.HTTPError as exc:
            raise ToolFailure(f"Could not reach the GitHub API at {self.api_url} ({type(exc).__name__}).") from None
        if resp.status_code in (200, 404, 422):
            return resp
        raise self.failure(resp)

    async def get_json(self, client: httpx.AsyncClient, suffix: str, params: dict[str, str]) -> Any:
        """GET under the repository and decode the JSON of a 200; any other answer is a `ToolFailure`."""
        resp = await self.get(client, suffix, params=params)
        if resp.status_code == 404:
            raise ToolFailure(
                f"GitHub answered 404 for {suffix} of {self.full_name}: the repository does not exist on "
                f"{self.api_url}, or the token in ${self.token_env} cannot see it."
            )
        return self.ok_json(resp)

    def failure(self, resp: httpx.Response) -> ToolFailure:
        """The failure for an answer that is not a success, by status: rate limits say when to retry."""
        status, headers = resp.status_code, resp.headers
        message = _message(resp)
        if status in (403, 429) and (headers.get("x-ratelimit-remaining") == "0" or headers.get("retry-after")):
            if headers.get("retry-after", "").isdigit():
                wait = f"retry after {headers['retry-after']} s"
            else:
                reset = int(headers.get("x-ratelimit-reset", "0") or 0)
                at = datetime.fromtimestamp(reset, UTC).strftime("%H:%M:%S UTC")
                wait = f"it resets at {at} (in about {max(0, round(reset - time.time()))} s)"
            tip = "" if self.headers().get("Authorization") else f" Setting ${self.token_env} raises the limit."
            return ToolFailure(
                f"GitHub API rate limit reached ({status}: {message}); {wait}.{tip}",
                hint="Do not retry before then: use other evidence meanwhile.",
            )
        if status == 401:
            return ToolFailure(f"GitHub rejected the token in ${self.token_env} (401: {message}). It needs renewing.")
        if status == 403:
            return ToolFailure(
                f"GitHub refused access to {self.full_name} (403: {message}). The token in ${self.token_env} may "
                "lack read access to this repository's contents."
            )
        if status >= 500:
            return ToolFailure(f"GitHub returned {status} ({message}).", hint="Try again shortly.")
        return ToolFailure(f"GitHub answered {status}: {message}.")

    def ok_json(self, resp: httpx.Response) -> Any:
        """The JSON body of a 200; any other answer, or a body that is not JSON, is a `ToolFailure`."""
        if resp.status_code != 200:
            raise self.failure(resp)
        try:
            return load_json(resp.content)
        except ValueError:
            raise ToolFailure(f"GitHub answered {resp.status_code} with a body that is not JSON.") from None


def _message(resp: httpx.Response) -> str:
    try:
        body = load_json(resp.content)
    except ValueError:
        return resp.text[:200] or resp.reason_phrase
    return str(body.get("message") if isinstance(body, dict) else body)[:200]
