"""What an API client may do, whatever way it calls (REST or MCP): start an investigation, read one, follow its events,
give it guidance, list its own. Every request goes through the gate as the client (`ApiClient`), and a client sees
only the runs it started: any other id is "not found", the same as an unknown one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import assert_never

import structlog

from bot.access.askers import ApiClient, requester
from bot.access.refusals import AccessRefused
from bot.api import shapes
from bot.api.events import EventId, EventKind, RunEvent, run_events
from bot.api.problems import ApiProblem, not_found, problem, refused
from bot.api.views import Links, investigation, item
from bot.api.wakeups import Wakeups, wait
from bot.gate.gate import Admitted, Gate
from bot.gate.requests import Guidance, Investigate, Place
from bot.runs.guidance import Kept, NotKept
from bot.runs.service import InvestigationService, NotStarted
from bot.slack.api_runs import api_run_opened
from bot.slack.outbox import Outbox
from bot.store.ports import RunLookup
from bot.store.protocol import StoreUnavailableError
from bot.store.records import RunRecord, RunStatus
from kernel import DEFAULT_REDACTOR, Redactor

log = structlog.get_logger("opsagent.api")

RUN_ID_CHARS = 64
MAX_LIST = 100
Progress = Callable[[RunEvent], Awaitable[None]]
"""Told each event of a run while a client waits for it (an MCP tool's progress notifications)."""


class ApiRuns:
    """The API's one way to the runs: the gate, the investigation service and the run store, for named clients."""

    def __init__(
        self,
        *,
        gate: Gate,
        investigations: InvestigationService,
        runs: RunLookup,
        outbox: Outbox,
        wakeups: Wakeups,
        links: Links,
        channel: str = "",
        redactor: Redactor = DEFAULT_REDACTOR,
    ) -> None:
        self._gate = gate
        self._investigations = investigations
        self._runs = runs
        self._outbox = outbox
        self._wakeups = wakeups
        self.links = links
        self._channel = channel
        """Where a run is posted when its request names no channel (`[api] channel`); "": nowhere."""
        self._redactor = redactor

    async def investigate(self, client: str, task: str, channel: str | None) -> shapes.Started | ApiProblem:
        """Start an investigation of `task` for `client`, posted in `channel` (or `[api] channel`, else nowhere):
        admitted by the gate first, then (in a channel) opened with a message whose thread holds the run."""
        asker = ApiClient(client)
        where = self._channel if channel is None else channel
        request = Investigate(asker, Place(where), self._redactor.redact(task.strip()))
        admission = await self._gate.admit(request)
        if isinstance(admission, AccessRefused):
            return refused(admission, now=self._gate.now())
        thread_ts = ""
        if where:  # as a mention would: the run lives in the thread of a message naming who asked, and what
            opening = api_run_opened(requester(asker), request.task)
            answer = await self._outbox.send("chat_postMessage", where, **opening.as_kwargs())
            thread_ts = str((answer or {}).get("ts") or "")
            if not thread_ts:
                self._gate.withdraw(admission)
                words = f"Slack did not post the run's opening message in {where}: is the bot a member of the channel?"
                return problem(502, "slack_unavailable", f"Not started: {words}")
        opened = Investigate(asker, Place(where, thread_ts), request.task)
        started = await self._investigations.start(Admitted(opened, admission.at, admission.counted, admission.name))
        match started:
            case NotStarted(refused=AccessRefused() as refusal):
                return refused(refusal, now=self._gate.now())
            case NotStarted(words=words):
                return problem(503, "not_started", words)
            case _:
                record = await self._runs.get_run(started.run_id)
                log.info("api_run_started", run_id=started.run_id, client=client, channel=where)
                return shapes.Started(
                    run_id=started.run_id,
                    status=shapes.InvestigationStatus.RUNNING,
                    url=self.links.url(record) if record is not None else None,
                    thread=self.links.thread(record) if record is not None else None,
                )

    async def investigation(self, client: str, run_id: str) -> shapes.Investigation | ApiProblem:
        """The client's run `run_id`: status, steps, usage, and its verdict once ended."""
        record = await self.run_of(client, run_id)
        return record if isinstance(record, ApiProblem) else investigation(record, self.links)

    async def investigations(self, client: str, limit: int) -> shapes.Investigations:
        """The client's latest `limit` runs (at most `MAX_LIST`), newest first."""
        records = await self._runs.runs_requested_by(requester(ApiClient(client)), limit=max(1, min(limit, MAX_LIST)))
        return shapes.Investigations(investigations=[item(record, self.links) for record in records])

    async def guide(self, client: str, run_id: str, text: str) -> shapes.GuidanceKept | ApiProblem:
        """Guidance for the client's running investigation, as from its thread: kept, and given to the model with
        its next request."""
        record = await self.run_of(client, run_id)
        if isinstance(record, ApiProblem):
            return record
        if record.status is RunStatus.FINISHED:
            return problem(409, "ended", f"Not passed on: investigation {run_id} has ended; start a new one")
        request = Guidance(ApiClient(client), Place(record.channel, record.thread_ts), record, self._redact(text))
        admission = await self._gate.admit(request)
        if isinstance(admission, AccessRefused):
            return refused(admission, now=self._gate.now())
        outcome = await self._investigations.guidance.given(admission)
        match outcome:
            case Kept(guidance=kept):
                return shapes.GuidanceKept(run_id=kept.run_id, seq=kept.seq)
            case AccessRefused():
                return refused(outcome, now=self._gate.now())
            case NotKept():
                return problem(503, "store_unavailable", "Not passed on: OpsAgent cannot reach its run store just now")
            case _:
                assert_never(outcome)

    async def events(self, record: RunRecord, after: EventId | None = None) -> AsyncIterator[RunEvent]:
        """The run's events after `after` (from the beginning when None), as they happen, ending after
        `run_finished` (or early, when the process shuts down): each once, in order, re-read from the store whenever
        the run moves (and every few seconds besides)."""
        run_id = record.run_id
        with self._wakeups.watch(run_id) as woken:
            while True:
                for event in run_events(record, self.links):
                    if after is None or event.id > after:
                        after = event.id
                        yield event
                if record.status is RunStatus.FINISHED:
                    return
                await wait(woken)
                if self._wakeups.closed:  # shutting down: the client reconnects, with the last id it read
                    return
                try:
                    record = await self._runs.get_run(run_id) or record
                except StoreUnavailableError as exc:  # the store is restarting: try again at the next wake-up
                    log.warning("api_events_store_unavailable", run_id=run_id, error=str(exc)[:200])

    async def wait(
        self, client: str, run_id: str, timeout_s: float, progress: Progress
    ) -> tuple[shapes.Investigation, bool] | ApiProblem:
        """Follow the client's run until it ends or `timeout_s` passes, telling `progress` each event; the run then,
        and whether it ended."""
        record = await self.run_of(client, run_id)
        if isinstance(record, ApiProblem):
            return record
        ended = False
        try:
            async with asyncio.timeout(timeout_s):
                async for event in self.events(record):
                    await progress(event)
                    ended = ended or event.kind is EventKind.RUN_FINISHED
        except TimeoutError:
            pass
        view = await self.investigation(client, run_id)
        return view if isinstance(view, ApiProblem) else (view, ended)

    async def run_of(self, client: str, run_id: str) -> RunRecord | ApiProblem:
        """The run, if `client` started it (what `events` follows); "not found" for an unknown id and for another
        client's run alike."""
        if not run_id or len(run_id) > RUN_ID_CHARS or not run_id.isascii():
            return not_found(run_id)
        record = await self._runs.get_run(run_id)
        if record is None or record.requested_by != requester(ApiClient(client)):
            return not_found(run_id)
        return record

    def _redact(self, text: str) -> str:
        return self._redactor.redact(text.strip())
