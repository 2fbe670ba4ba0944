"""Tests for the shared retrying POST: backoff, Retry-After, error mapping, against a real local server."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from kernel.adapters.http_adapter import first_env, require_env
from kernel.adapters.http_retry import RetryPolicy, api_error_message, post_json_with_retries, retry_after_seconds
from kernel.llm import LLMError, LLMErrorKind
from testkit.fakes.model_server import (
    Reply,
    anthropic_error,
    closed_port_url,
    fast_policy,
    openai_error,
)

OK = {"ok": True}


@pytest.fixture
async def client():
    async with httpx.AsyncClient() as http:
        yield http


async def post(client, server_or_url, policy, **kwargs):
    url = server_or_url if isinstance(server_or_url, str) else f"{server_or_url.url}/v1/thing"
    return await post_json_with_retries(
        client, url, json={"q": 1}, headers={"authorization": "Bearer k"}, policy=policy, **kwargs
    )


async def test_success_returns_the_json_and_sends_body_and_headers(server, client, sleeps):
    server.script(Reply(OK))
    assert await post(client, server, fast_policy(sleeps), params={"api-version": "2024-10-21"}) == OK
    (request,) = server.requests
    assert request.method == "POST"
    assert request.path == "/v1/thing"
    assert request.query == {"api-version": "2024-10-21"}
    assert request.json == {"q": 1}
    assert request.headers["authorization"] == "Bearer k"
    assert sleeps.delays == []


async def test_429_waits_for_retry_after_then_succeeds(server, client, sleeps):
    server.script(Reply(openai_error("Rate limit reached"), status=429, headers={"Retry-After": "1"}), Reply(OK))
    assert await post(client, server, fast_policy(sleeps, base_delay=0.01)) == OK
    assert sleeps.delays == [1.0]
    assert len(server.requests) == 2


async def test_retry_after_ms_wins_over_retry_after(server, client, sleeps):
    headers = {"retry-after-ms": "250", "retry-after": "1"}
    server.script(Reply(openai_error("slow down"), status=429, headers=headers), Reply(OK))
    assert await post(client, server, fast_policy(sleeps)) == OK
    assert sleeps.delays == [0.25]


async def test_retry_after_is_capped_by_max_delay(server, client, sleeps):
    server.script(Reply(openai_error("later"), status=503, headers={"Retry-After": "3600"}), Reply(OK))
    assert await post(client, server, fast_policy(sleeps, max_delay=5.0)) == OK
    assert sleeps.delays == [5.0]


async def test_500_twice_backs_off_exponentially_then_succeeds(server, client, sleeps):
    server.script(Reply(openai_error("boom"), status=500), Reply(b"Bad Gateway", status=502), Reply(OK))
    assert await post(client, server, fast_policy(sleeps, base_delay=0.5)) == OK
    assert sleeps.delays == [0.5, 1.0]
    assert len(server.requests) == 3


async def test_full_jitter_scales_the_backoff(server, client, sleeps):
    server.script(Reply(status=500), Reply(status=500), Reply(OK))
    assert await post(client, server, fast_policy(sleeps, base_delay=0.5, jitter=lambda: 0.5)) == OK
    assert sleeps.delays == [0.25, 0.5]


async def test_persistent_503_gives_up_with_attempts_and_the_api_message(server, client, sleeps):
    server.script(*[Reply(openai_error("The engine is currently overloaded"), status=503)] * 4)
    with pytest.raises(LLMError) as caught:
        await post(client, server, fast_policy(sleeps, max_attempts=4))
    error = caught.value
    assert error.kind is LLMErrorKind.SERVER_ERROR
    assert error.status == 503
    assert error.attempts == 4
    assert "The engine is currently overloaded" in error.message
    assert "after 4 attempts" in str(error)
    assert len(server.requests) == 4
    assert len(sleeps.delays) == 3


async def test_exhausted_429_reports_rate_limited(server, client, sleeps):
    server.script(*[Reply(openai_error("Rate limit reached"), status=429)] * 2)
    with pytest.raises(LLMError) as caught:
        await post(client, server, fast_policy(sleeps, max_attempts=2))
    assert caught.value.kind is LLMErrorKind.RATE_LIMITED
    assert caught.value.attempts == 2


async def test_529_overloaded_is_retried(server, client, sleeps):
    server.script(Reply(anthropic_error("overloaded_error", "Overloaded"), status=529), Reply(OK))
    assert await post(client, server, fast_policy(sleeps)) == OK
    assert len(server.requests) == 2


async def test_hanging_server_times_out(server, client, sleeps):
    server.script(Reply(OK, delay=5.0), Reply(OK, delay=5.0))
    with pytest.raises(LLMError) as caught:
        await post(client, server, fast_policy(sleeps, timeout=0.2, max_attempts=2))
    assert caught.value.kind is LLMErrorKind.TIMEOUT
    assert caught.value.attempts == 2
    assert "0.2 s" in caught.value.message


async def test_timeout_then_success(server, client, sleeps):
    server.script(Reply(OK, delay=5.0), Reply({"second": True}))
    assert await post(client, server, fast_policy(sleeps, timeout=0.2)) == {"second": True}


async def test_non_json_200_is_retried_once_then_malformed(server, client, sleeps):
    html = b"<html><body>Welcome to nginx</body></html>"
    server.script(Reply(html, headers={"Content-Type": "text/html"}), Reply(html), Reply(OK))
    with pytest.raises(LLMError) as caught:
        await post(client, server, fast_policy(sleeps, max_attempts=4))
    assert caught.value.kind is LLMErrorKind.MALFORMED_RESPONSE
    assert caught.value.attempts == 2
    assert "Welcome to nginx" in caught.value.message
    assert "base URL" in caught.value.message
    assert len(server.requests) == 2


async def test_non_json_200_once_then_good_json_succeeds(server, client, sleeps):
    server.script(Reply(b'{"choices": [tru'), Reply(OK))
    assert await post(client, server, fast_policy(sleeps)) == OK


async def test_json_that_is_not_an_object_is_malformed(server, client, sleeps):
    server.script(Reply([1, 2]), Reply([1, 2]))
    with pytest.raises(LLMError) as caught:
        await post(client, server, fast_policy(sleeps))
    assert caught.value.kind is LLMErrorKind.MALFORMED_RESPONSE


async def test_400_fails_at_once_with_the_api_message(server, client, sleeps):
    server.script(Reply(openai_error("Invalid value for 'temperature': must be <= 2."), status=400), Reply(OK))
    with pytest.raises(LLMError) as caught:
        await post(client, server, fast_policy(sleeps))
    assert caught.value.kind is LLMErrorKind.BAD_REQUEST
    assert caught.value.status == 400
    assert caught.value.attempts == 1
    assert "Invalid value for 'temperature': must be <= 2." in caught.value.message
    assert len(server.requests) == 1
    assert sleeps.delays == []


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_failures_name_the_setting_to_check(server, client, sleeps, status):
    server.script(Reply(openai_error("Incorrect API key provided: sk-abc***"), status=status))
    with pytest.raises(LLMError) as caught:
        await post(client, server, fast_policy(sleeps), auth_hint="Check OPSAGENT_LLM_API_KEY.")
    assert caught.value.kind is LLMErrorKind.AUTH
    assert caught.value.status == status
    assert "Incorrect API key provided" in caught.value.message
    assert caught.value.message.endswith("Check OPSAGENT_LLM_API_KEY.")
    assert len(server.requests) == 1


async def test_404_hints_at_base_url_and_model(server, client, sleeps):
    server.script(Reply(b"404 page not found", status=404))
    with pytest.raises(LLMError) as caught:
        await post(client, server, fast_policy(sleeps))
    assert caught.value.kind is LLMErrorKind.BAD_REQUEST
    assert "404 page not found" in caught.value.message
    assert "base URL" in caught.value.message


async def test_501_is_a_server_error_without_retry(server, client, sleeps):
    server.script(Reply(openai_error("not implemented"), status=501), Reply(OK))
    with pytest.raises(LLMError) as caught:
        await post(client, server, fast_policy(sleeps))
    assert caught.value.kind is LLMErrorKind.SERVER_ERROR
    assert len(server.requests) == 1


async def test_connection_refused_becomes_connection_error(client, sleeps):
    url = f"{closed_port_url()}/v1/chat/completions"
    with pytest.raises(LLMError) as caught:
        await post(client, url, fast_policy(sleeps, max_attempts=3))
    assert caught.value.kind is LLMErrorKind.CONNECTION
    assert caught.value.attempts == 3
    assert url in caught.value.message
    assert len(sleeps.delays) == 2


async def test_unsupported_scheme_is_a_bad_request_not_an_httpx_exception(client, sleeps):
    with pytest.raises(LLMError) as caught:
        await post(client, "ftp://example.invalid/v1/messages", fast_policy(sleeps))
    assert caught.value.kind is LLMErrorKind.BAD_REQUEST
    assert "http://" in caught.value.message


def test_retry_after_parsing():
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds({"retry-after": "7"}, now=now) == 7.0
    assert retry_after_seconds({"retry-after": "Wed, 01 Jan 2025 12:00:30 GMT"}, now=now) == 30.0
    assert retry_after_seconds({"retry-after": "Wed, 01 Jan 2025 11:00:00 GMT"}, now=now) == 0.0
    assert retry_after_seconds({"retry-after": "Wed, 01 Jan 2025 12:00:10 -0000"}, now=now) == 10.0
    assert retry_after_seconds({"retry-after-ms": "1500"}, now=now) == 1.5
    assert retry_after_seconds({"retry-after": "soon"}, now=now) is None
    assert retry_after_seconds({}, now=now) is None


def test_backoff_doubles_and_is_capped():
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0, jitter=lambda: 1.0)
    assert [policy.backoff(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert RetryPolicy(base_delay=0.5, jitter=lambda: 0.0).backoff(3) == 0.0


def test_policy_defaults_and_validation():
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.base_delay, policy.max_delay, policy.timeout) == (4, 0.5, 20.0, 60.0)
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="timeout"):
        RetryPolicy(timeout=0)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (openai_error("model not found"), "model not found"),
        (anthropic_error("invalid_request_error", "max_tokens: Field required"), "max_tokens: Field required"),
        ({"error": "llama3 does not support tools"}, "llama3 does not support tools"),
        ({"object": "error", "message": "vLLM says no", "code": 400}, "vLLM says no"),
        ({"detail": "Not authenticated"}, "Not authenticated"),
    ],
)
def test_api_error_message_understands_common_shapes(body, expected):
    assert api_error_message(httpx.Response(400, json=body)) == expected


def test_api_error_message_falls_back_to_the_body_or_reason():
    assert api_error_message(httpx.Response(502, text="upstream connect error")) == "'upstream connect error'"
    assert api_error_message(httpx.Response(502)) == "Bad Gateway"


def test_env_helpers():
    env = {"A": "  ", "B": " value ", "C": "other"}
    assert first_env(env, "A", "B", "C") == "value"
    assert first_env(env, "MISSING") is None
    with pytest.raises(ValueError, match="MISSING_ONE or A is not set"):
        require_env(env, "MISSING_ONE", "A", purpose="something")
