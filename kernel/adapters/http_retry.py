"""One JSON POST with retries and error mapping, shared by the LLM adapters.

Both adapters go through `post_json_with_retries`, so backoff, `Retry-After` and error messages behave the same for every provider.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from kernel.llm import LLMError, LLMErrorKind

log = logging.getLogger(__name__)

RETRYABLE_STATUSES: Mapping[int, LLMErrorKind] = {
    408: LLMErrorKind.TIMEOUT,
    429: LLMErrorKind.RATE_LIMITED,
    500: LLMErrorKind.SERVER_ERROR,
    502: LLMErrorKind.SERVER_ERROR,
    503: LLMErrorKind.SERVER_ERROR,
    504: LLMErrorKind.SERVER_ERROR,
    529: LLMErrorKind.SERVER_ERROR,  # Anthropic "overloaded_error"
}
"""Statuses worth another attempt, and the error kind each becomes once retries run out."""

_NEXT_STEP: Mapping[LLMErrorKind, str] = {
    LLMErrorKind.RATE_LIMITED: "Lower the request rate or raise the provider quota.",
    LLMErrorKind.SERVER_ERROR: "The provider is failing; try again later.",
    LLMErrorKind.TIMEOUT: "Raise RetryPolicy.timeout or check the endpoint's load.",
}


@dataclass(frozen=True)
class RetryPolicy:
    """How hard an adapter tries before it raises `LLMError`.

    Attributes:
        max_attempts: HTTP attempts in all, the first included (1 means no retry).
        base_delay: seconds to wait before the second attempt; doubled after each further failure.
        max_delay: ceiling in seconds for any single wait, backoff and `Retry-After` alike.
        timeout: seconds one attempt may spend connecting, sending, or waiting for each read.
        sleep: how to wait between attempts; tests inject a recorder instead of `asyncio.sleep`.
        jitter: returns a float in [0, 1] that scales the backoff ("full jitter", so clients
            that failed together do not retry together); tests inject `lambda: 1.0`.

    A 200 whose body is not a JSON object is retried once at most (a truncated body from a proxy is
    transient; an HTML page from a wrong base URL is not, and repeating it wastes the budget).
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    timeout: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    jitter: Callable[[], float] = random.random

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"RetryPolicy.max_attempts must be at least 1, got {self.max_attempts}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("RetryPolicy delays must not be negative")
        if self.timeout <= 0:
            raise ValueError(f"RetryPolicy.timeout must be positive, got {self.timeout}")

    def backoff(self, failures: int) -> float:
        """Seconds to wait after the `failures`-th failed attempt when the server gave no hint."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** min(failures - 1, 62))
        return ceiling * self.jitter()


@dataclass(frozen=True)
class _Failure:
    kind: LLMErrorKind
    message: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None


async def post_json_with_retries(
    client: httpx.AsyncClient,
    url: str,
    *,
    json: Mapping[str, Any],
    headers: Mapping[str, str],
    policy: RetryPolicy,
    params: Mapping[str, str] | None = None,
    auth_hint: str = "Check the API key.",
) -> dict[str, Any]:
    """POST `json` to `url` and return the response's JSON object, retrying transient failures.

    Retries 408, 429, 500, 502, 503, 504, 529, connection errors and timeouts with exponential
    backoff and full jitter, or after the server's `retry-after-ms` / `Retry-After` when given
    (capped by `policy.max_delay`). No httpx exception escapes: a final failure raises `LLMError`
    with the API's own message; `auth_hint` ends the message of a 401/403 (name the key's setting).
    """
    malformed_seen = False
    for attempt in range(1, policy.max_attempts + 1):
        outcome = await _attempt(client, url, json, headers, params, policy.timeout, auth_hint)
        if isinstance(outcome, dict):
            return outcome
        failure = outcome
        if failure.kind is LLMErrorKind.MALFORMED_RESPONSE:
            failure = replace(failure, retryable=not malformed_seen)
            malformed_seen = True
        if not failure.retryable or attempt == policy.max_attempts:
            raise LLMError(failure.kind, failure.message, status=failure.status, attempts=attempt)
        if failure.retry_after is not None:
            delay = min(policy.max_delay, failure.retry_after)
        else:
            delay = policy.backoff(attempt)
        log.warning(
            "LLM call failed (attempt %d/%d), retrying in %.2f s: %s",
            attempt,
            policy.max_attempts,
            delay,
            failure.message,
        )
        await policy.sleep(delay)
    raise AssertionError("unreachable: the last attempt always returns or raises")


async def _attempt(
    client: httpx.AsyncClient,
    url: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    params: Mapping[str, str] | None,
    request_timeout: float,
    auth_hint: str,
) -> dict[str, Any] | _Failure:
    try:
        response = await client.post(url, json=body, headers=dict(headers), params=params, timeout=request_timeout)
    except httpx.TimeoutException as exc:
        message = f"No response from {url} within {request_timeout:g} s ({type(exc).__name__}). {_NEXT_STEP[LLMErrorKind.TIMEOUT]}"
        return _Failure(LLMErrorKind.TIMEOUT, message, retryable=True)
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        message = f"Cannot send to {url!r}: {exc}. Check the base URL; it must start with http:// or https://."
        return _Failure(LLMErrorKind.BAD_REQUEST, message, retryable=False)
    except httpx.TransportError as exc:
        detail = str(exc) or type(exc).__name__
        message = f"Cannot reach {url}: {detail}. Check the base URL and that the server is running."
        return _Failure(LLMErrorKind.CONNECTION, message, retryable=True)
    except httpx.HTTPError as exc:
        message = f"Request to {url} failed: {type(exc).__name__}: {exc}"
        return _Failure(LLMErrorKind.CONNECTION, message, retryable=False)

    status = response.status_code
    if 200 <= status < 300:
        try:
            data = response.json()
        except ValueError:
            data = None
        if isinstance(data, dict):
            return data
        message = (
            f"HTTP {status} from {url} is not a JSON object: {preview(response.text)}. "
            "Check that the base URL points at the API root (for OpenAI-compatible servers it usually ends in /v1)."
        )
        return _Failure(LLMErrorKind.MALFORMED_RESPONSE, message, retryable=True, status=status)

    api_message = api_error_message(response)
    if status in RETRYABLE_STATUSES:
        kind = RETRYABLE_STATUSES[status]
        message = f"HTTP {status} from {url}: {_sentence(api_message)} {_NEXT_STEP[kind]}"
        return _Failure(kind, message, retryable=True, status=status, retry_after=retry_after_seconds(response.headers))
    if status in (401, 403):
        message = f"HTTP {status} from {url}: {_sentence(api_message)} {auth_hint}"
        return _Failure(LLMErrorKind.AUTH, message, retryable=False, status=status)
    if 300 <= status < 400:
        location = response.headers.get("location", "elsewhere")
        message = f"HTTP {status} from {url}: redirected to {location}. Set the base URL to the final address."
        return _Failure(LLMErrorKind.BAD_REQUEST, message, retryable=False, status=status)
    if 400 <= status < 500:
        hint = " Check the base URL and the model name." if status == 404 else ""
        message = f"HTTP {status} from {url}: {_sentence(api_message)}{hint}"
        return _Failure(LLMErrorKind.BAD_REQUEST, message, retryable=False, status=status)
    message = f"HTTP {status} from {url}: {_sentence(api_message)}"
    return _Failure(LLMErrorKind.SERVER_ERROR, message, retryable=False, status=status)


def api_error_message(response: httpx.Response) -> str:
    """The API's own explanation of an error response, whatever the server's error shape.

    Understands `{"error": {"message": ...}}` (OpenAI, Anthropic, vLLM), `{"error": "..."}` (Ollama),
    `{"message": ...}` and `{"detail": ...}` (FastAPI-based servers); otherwise the start of the body.
    """
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str) and error:
            return error
        if isinstance(body.get("message"), str):
            return body["message"]
        if "detail" in body:
            detail = body["detail"]
            return detail if isinstance(detail, str) else preview(json.dumps(detail))
    return preview(response.text) if response.text.strip() else (response.reason_phrase or "no details")


def retry_after_seconds(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """The wait the server asked for: `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def preview(text: str, limit: int = 300) -> str:
    """The start of a body for an error message, quoted, so a stray HTML page is recognisable."""
    text = text.strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."
