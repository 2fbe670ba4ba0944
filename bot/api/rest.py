"""The REST door: `/v1/investigations` and the rest, on `serve`'s HTTP listener.

Every request shows its bearer token first (401, and nothing else, without a known one); a body is read only then,
to 64 KiB, within the listener's body deadline, and must be JSON of the request's shape. Answers are JSON
(`bot.api.shapes`); a refusal is a `Problem` with the status that fits it. The events of a run are a Server-Sent
Events stream that ends after `run_finished`.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

import structlog
from aiohttp import web
from pydantic import BaseModel, ValidationError

from bot.api.events import EventId, RunEvent
from bot.api.openapi import openapi_document
from bot.api.problems import BODY_TOO_LARGE, UNAUTHORIZED, ApiProblem, invalid_json, invalid_request, problem
from bot.api.runs import ApiRuns
from bot.api.settings import BODY_BYTES
from bot.api.shapes import GuidanceBody, InvestigateBody
from bot.api.tokens import ApiTokens
from bot.http_limits.bodies import read_body
from bot.store.protocol import StoreUnavailableError

log = structlog.get_logger("opsagent.api")

HEARTBEAT_S = 15.0
"""How often an idle event stream sends a comment: proxies keep it open, and a client that left is noticed."""
RETRY_MS = 2000
"""How long an event stream's client waits before it reconnects (the stream's `retry:`)."""
LIST_LIMIT = 20
Body = TypeVar("Body", bound=BaseModel)
Answer = BaseModel | ApiProblem | web.StreamResponse
Handle = Callable[[web.Request, str], Awaitable[Answer]]


class RestApi:
    """The REST routes over `ApiRuns`, for the clients `tokens` names."""

    def __init__(self, api: ApiRuns, tokens: ApiTokens) -> None:
        self._api = api
        self._tokens = tokens
        self._openapi = json.dumps(openapi_document(), indent=2)

    def routes(self) -> list[web.RouteDef]:
        """The API's routes, each behind the token check (the OpenAPI document is public)."""
        return [
            web.post("/v1/investigations", self._door(self._start)),
            web.get("/v1/investigations", self._door(self._list)),
            web.get("/v1/investigations/{run_id}", self._door(self._get)),
            web.get("/v1/investigations/{run_id}/events", self._door(self._events)),
            web.post("/v1/investigations/{run_id}/guidance", self._door(self._guide)),
            web.get("/v1/openapi.json", self._document),
        ]

    def _door(self, handle: Handle) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def door(request: web.Request) -> web.StreamResponse:
            client = self._tokens.client(request.headers.get("Authorization", ""))
            if client is None:
                log.warning("api_unauthorised", path=request.path, remote=request.remote)
                return answered(UNAUTHORIZED)
            try:
                answer = await handle(request, client)
            except StoreUnavailableError as exc:
                log.error("api_store_unavailable", path=request.path, error=str(exc)[:300])
                answer = problem(503, "store_unavailable", "OpsAgent cannot reach its run store just now: try again")
            return answer if isinstance(answer, web.StreamResponse) else answered(answer)

        return door

    async def _start(self, request: web.Request, client: str) -> Answer:
        body = await _body(request, InvestigateBody)
        if isinstance(body, ApiProblem):
            return body
        started = await self._api.investigate(client, body.task, body.channel)
        return started if isinstance(started, ApiProblem) else answered(started, status=202)

    async def _list(self, request: web.Request, client: str) -> Answer:
        limit = request.query.get("limit", str(LIST_LIMIT))
        if not (limit.isascii() and limit.isdigit() and 1 <= int(limit) <= 100):
            return problem(422, "invalid_request", f"limit must be a whole number from 1 to 100, not {limit[:20]!r}")
        return await self._api.investigations(client, int(limit))

    async def _get(self, request: web.Request, client: str) -> Answer:
        return await self._api.investigation(client, request.match_info["run_id"])

    async def _guide(self, request: web.Request, client: str) -> Answer:
        body = await _body(request, GuidanceBody)
        if isinstance(body, ApiProblem):
            return body
        kept = await self._api.guide(client, request.match_info["run_id"], body.text)
        return kept if isinstance(kept, ApiProblem) else answered(kept, status=202)

    async def _events(self, request: web.Request, client: str) -> Answer:
        record = await self._api.run_of(client, request.match_info["run_id"])
        if isinstance(record, ApiProblem):
            return record
        last = request.headers.get("Last-Event-ID", "").strip()
        after = EventId.parse(last) if last else None
        if last and after is None:
            return problem(400, "invalid_last_event_id", "Last-Event-ID must be an id this stream sent (like 0.1.1.0)")
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )
        await response.prepare(request)
        await response.write(f"retry: {RETRY_MS}\n\n".encode())
        ended = await _stream(response, self._api.events(record, after))
        log.info("api_events_closed", run_id=record.run_id, client=client, ended=ended)
        if ended:
            await response.write_eof()
        return response

    async def _document(self, _: web.Request) -> web.Response:
        return web.Response(text=self._openapi, content_type="application/json")


def answered(answer: BaseModel | ApiProblem, *, status: int = 200) -> web.Response:
    """An answer as JSON; a problem with its status (and `WWW-Authenticate`, `Retry-After` where they fit)."""
    if not isinstance(answer, ApiProblem):
        return web.json_response(text=answer.model_dump_json(), status=status)
    headers = {}
    if answer.status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="opsagent"'
    if answer.status == 413:
        headers["Connection"] = "close"  # the rest of the body is not read
    if (retry_at := answer.problem.retry_at) is not None:
        headers["Retry-After"] = str(max(1, math.ceil((retry_at - datetime.now(UTC)).total_seconds())))
    return web.json_response(text=answer.problem.model_dump_json(), status=answer.status, headers=headers)


async def _body(request: web.Request, shape: type[Body]) -> Body | ApiProblem:
    """The request's JSON body as `shape`: 413 past 64 KiB, 400 for what is not JSON, 422 for the wrong shape."""
    raw = await read_body(request, BODY_BYTES)
    if raw is None:
        return BODY_TOO_LARGE
    try:
        data = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError) as exc:
        return invalid_json(str(exc)[:200])
    if not isinstance(data, dict):
        return invalid_json(f"got {type(data).__name__}, not an object")
    try:
        return shape.model_validate(data)
    except ValidationError as exc:
        return invalid_request(exc)


def frame(event: RunEvent) -> bytes:
    """One event as Server-Sent Events send it: its id, its kind, its data as one line of JSON."""
    data = json.dumps(event.data, ensure_ascii=False, separators=(",", ":"))
    return f"id: {event.id}\nevent: {event.kind}\ndata: {data}\n\n".encode()


async def _stream(response: web.StreamResponse, events: AsyncIterator[RunEvent]) -> bool:
    """Write the events as they come, with a comment every `HEARTBEAT_S` between them; whether the run's end was
    written (False: the client left, which a write, an event's or a heartbeat's, finds out)."""

    async def send() -> None:
        async for event in events:
            await response.write(frame(event))

    async def beat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            await response.write(b": keep-alive\n\n")

    sending, beating = asyncio.create_task(send()), asyncio.create_task(beat())
    try:
        await asyncio.wait({sending, beating}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        sending.cancel()
        beating.cancel()
        await asyncio.gather(sending, beating, return_exceptions=True)
    failed = None if sending.cancelled() else sending.exception()
    if failed is not None and not isinstance(failed, ConnectionError):
        log.error("api_events_failed", error=repr(failed)[:300])
    return not sending.cancelled() and failed is None
