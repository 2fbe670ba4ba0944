"""Why an API request did nothing, as a value: its HTTP status and the `Problem` the caller reads (the MCP tools say
the same words as tool errors). Words for an agent or a script: what was wrong, and what to do next.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import assert_never

from pydantic import ValidationError

from bot.access.refusals import AccessRefused, RefusalReason
from bot.api.settings import BODY_BYTES, MAX_TASK_CHARS
from bot.api.shapes import Problem
from bot.words import duration


@dataclass(frozen=True, slots=True)
class ApiProblem:
    """A request that did nothing: its HTTP status, and what the caller is told."""

    status: int
    problem: Problem

    @property
    def message(self) -> str:
        """The words alone (an MCP tool's error)."""
        return self.problem.error


def problem(status: int, code: str, error: str, retry_at: datetime | None = None) -> ApiProblem:
    """A problem with its status, machine code and words."""
    return ApiProblem(status, Problem(code=code, error=error, retry_at=retry_at))


UNAUTHORIZED = problem(
    401, "unauthorized", "missing or unknown bearer token: send `Authorization: Bearer <token>` with a token of [api]"
)
BODY_TOO_LARGE = problem(
    413, "body_too_large", f"the request body is over {BODY_BYTES // 1024} KiB, the most the API reads"
)


def not_found(run_id: str) -> ApiProblem:
    """An id that names no run of this client (unknown, expired, or another client's: the same answer)."""
    shown = run_id[:64] + ("…" if len(run_id) > 64 else "")
    return problem(
        404,
        "not_found",
        f"no investigation {shown!r} was started with this token: check the run_id (GET /v1/investigations lists "
        "this token's runs)",
    )


def invalid_json(error: str) -> ApiProblem:
    """A body that is not JSON."""
    return problem(400, "invalid_json", f"the request body is not valid JSON ({error}): send a JSON object")


def invalid_request(error: ValidationError) -> ApiProblem:
    """A JSON body that does not fit the request's shape: each field's problem, in a line."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "the body"
    if first["type"] == "string_too_long" and field == "task":
        given = len(first["input"]) if isinstance(first["input"], str) else 0
        return problem(
            422,
            "task_too_long",
            f"task is {given:,} characters; the API takes at most {MAX_TASK_CHARS:,}: ask the question and say where "
            "to look (service, symptom, time). OpsAgent reads the logs, metrics and code itself",
        )
    said = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'the body'}: {e['msg']}" for e in error.errors()[:5])
    return problem(422, "invalid_request", f"the request does not fit: {said}")


def refused(refusal: AccessRefused, *, now: datetime) -> ApiProblem:
    """The gate's refusal, said to an API client: which rule, and when trying again can work."""
    again = _again(refusal, now)
    limit = f"{refusal.limit or 0:g}"
    match refusal.reason:
        case RefusalReason.USER_RATE:
            words = f"this token started {refusal.used or 0:g} investigations in the last hour, the most one may{again}"
            return problem(429, "rate_limited", f"Not started: {words}", refusal.retry_at)
        case RefusalReason.CHANNEL_RATE:
            words = (
                f"the channel started {refusal.used or 0:g} investigations in the last hour, the most allowed{again}"
            )
            return problem(429, "rate_limited", f"Not started: {words}", refusal.retry_at)
        case RefusalReason.DAILY_SPEND:
            words = f"today's model spend cap (${refusal.limit or 0:,.2f}) is reached{again}"
            return problem(429, "spend_cap", f"Not started: {words}", refusal.retry_at)
        case RefusalReason.CONCURRENT_RUNS:
            words = f"the most investigations OpsAgent runs at once ({limit}) are running; try again when one ends"
            return problem(429, "at_capacity", f"Not started: {words}")
        case RefusalReason.CHANNEL:
            words = f"investigations may start only in {', '.join(refusal.channels)} ([access] allowed_channels)"
            return problem(403, "channel_not_allowed", f"Not started: {words}")
        case RefusalReason.GUIDANCE_TOO_LONG:
            return problem(422, "guidance_too_long", f"Not passed on: guidance is at most {limit} characters")
        case RefusalReason.GUIDANCE_LIMIT:
            words = f"this investigation has taken {limit} messages of guidance, the most one run takes"
            return problem(429, "guidance_limit", f"Not passed on: {words}; start a new one with what you know")
        case (
            RefusalReason.API_CLIENT
            | RefusalReason.WORKSPACE
            | RefusalReason.GUEST
            | RefusalReason.BOT
            | RefusalReason.DEACTIVATED
            | RefusalReason.NOT_AN_APPROVER
            | RefusalReason.DIRECTORY_UNAVAILABLE
            | RefusalReason.NOT_THEIR_MODAL
        ):
            return problem(403, "forbidden", f"API clients may not do this ({refusal.action}): people in Slack may")
        case _:
            assert_never(refusal.reason)


def _again(refusal: AccessRefused, now: datetime) -> str:
    if refusal.retry_at is None:
        return ""
    wait = duration(max((refusal.retry_at - now).total_seconds(), 0) * 1000)
    return f"; try again at {refusal.retry_at.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ} (in {wait})"
