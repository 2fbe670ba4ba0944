"""A client of OpsAgent's HTTP API for the tests, as a program would call it: bearer token, JSON, and a Server-Sent
Events reader that parses the wire format itself (ids, event names, data lines, comments, `retry`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Self

import aiohttp


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status, headers, and the body as JSON (None when it is not JSON)."""

    status: int
    headers: dict[str, str]
    json: Any


@dataclass(frozen=True)
class SseEvent:
    """One Server-Sent Event as the client received it."""

    id: str
    event: str
    data: Any


class ApiCaller:
    """Calls `base_url` with `token` (none: no Authorization header)."""

    def __init__(self, base_url: str, token: str | None) -> None:
        self.base_url = base_url
        self.http = aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"} if token else {})

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.http.close()

    async def call(self, method: str, path: str, **options: Any) -> Answer:
        """One request; `json=` or `data=` for a body."""
        async with self.http.request(method, f"{self.base_url}{path}", **options) as response:
            raw = await response.read()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            return Answer(response.status, dict(response.headers), body)

    async def investigate(self, task: str, **fields: Any) -> Answer:
        return await self.call("POST", "/v1/investigations", json={"task": task, **fields})

    async def investigation(self, run_id: str) -> Answer:
        return await self.call("GET", f"/v1/investigations/{run_id}")

    async def events(self, run_id: str, last_event_id: str | None = None) -> AsyncIterator[SseEvent]:
        """The run's event stream, event by event, until the server ends it (a 4xx raises with its body)."""
        headers = {"Accept": "text/event-stream", **({"Last-Event-ID": last_event_id} if last_event_id else {})}
        timeout = aiohttp.ClientTimeout(total=None, sock_read=60)
        url = f"{self.base_url}/v1/investigations/{run_id}/events"
        async with self.http.get(url, headers=headers, timeout=timeout) as response:
            if response.status != 200:
                raise AssertionError(f"events answered {response.status}: {await response.text()}")
            assert response.headers["Content-Type"].startswith("text/event-stream")
            fields: dict[str, list[str]] = {}
            async for raw in response.content:
                line = raw.decode().rstrip("\r\n")
                if not line:
                    if "data" in fields:
                        data = "\n".join(fields["data"])
                        yield SseEvent(
                            fields.get("id", [""])[-1], fields.get("event", ["message"])[-1], json.loads(data)
                        )
                    fields = {}
                elif not line.startswith(":"):
                    name, _, value = line.partition(":")
                    fields.setdefault(name, []).append(value.removeprefix(" "))

    async def whole_run(self, run_id: str, last_event_id: str | None = None) -> list[SseEvent]:
        """Every event of the run (after `last_event_id`) until its stream ends."""
        return [event async for event in self.events(run_id, last_event_id)]
