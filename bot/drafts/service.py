"""Drafts asked for in an investigation's thread: “@opsagent postmortem” uploads a Markdown postmortem draft,
“@opsagent status” posts a stakeholder update to copy. Both are built from the run's recorded facts and the
thread's messages; a model writes only their narrative, and its absence or failure still gives the facts.

The gate admits each ask like a run (who asks, the limits); the handler returns at once: each draft is made in a
task of its own, awaited at shutdown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import assert_never

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.audit.trail import AuditLog
from bot.drafts.facts import gather_facts
from bot.drafts.postmortem import draft_postmortem
from bot.drafts.status import draft_status
from bot.gate.gate import Admitted
from bot.gate.requests import AskDraft, DraftKind
from bot.slack.drafts import DRAFTING, NO_INVESTIGATION, postmortem_upload, status_message
from bot.slack.outbox import Outbox
from bot.slack.permalinks import thread_url
from bot.slack.thread_history import human_messages
from bot.store.ports import FeedbackStore, RunLookup, SideEffectStore
from bot.store.protocol import StoreUnavailableError
from bot.store.records import RunRecord, utc_now
from kernel import LLM

log = structlog.get_logger("opsagent.drafts")


class DraftService:
    """Makes the drafts asked for in threads, from the store's records of the run (its latest checkpoint, audit log,
    side effects and ratings), the thread's history and an optional model."""

    def __init__(
        self,
        *,
        runs: RunLookup,
        audit: AuditLog,
        side_effects: SideEffectStore,
        feedback: FeedbackStore,
        outbox: Outbox,
        client: AsyncWebClient,
        llm: LLM | None,
        workspace_url: str = "",
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._runs = runs
        self._audit, self._side_effects, self._feedback = audit, side_effects, feedback
        self._outbox = outbox
        self._client = client
        self._llm = llm
        self._workspace_url = workspace_url
        self._clock = clock
        self._tasks: set[asyncio.Task[None]] = set()

    def asked(self, admitted: Admitted[AskDraft]) -> None:
        """A draft the gate admitted (counted against the limits like a run): start making it from the thread's
        latest run, or say there is none."""
        kind, latest, place = admitted.request.kind, admitted.request.run, admitted.request.place
        if latest is None:
            self._reply(place.channel, place.thread_ts, NO_INVESTIGATION)
            return
        self._reply(place.channel, place.thread_ts, DRAFTING[kind])
        task = asyncio.create_task(self.draft(kind, latest), name=f"draft-{kind}-{latest.run_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def draft(self, kind: DraftKind, record: RunRecord) -> None:
        """Make one draft of `record`'s run and post it in its thread; a failure is said there, never raised."""
        structlog.contextvars.bind_contextvars(run_id=record.run_id, draft=str(kind))
        try:
            record = await self._runs.get_run(record.run_id) or record  # its latest checkpoint
            history = await human_messages(self._client, record.channel, record.thread_ts)
            facts = await gather_facts(
                record, history, audit=self._audit, side_effects=self._side_effects, feedback=self._feedback
            )
            match kind:
                case DraftKind.POSTMORTEM:
                    link = thread_url(self._workspace_url, record.channel, record.thread_ts)
                    draft = await draft_postmortem(facts, self._llm, thread_url=link, now=self._clock())
                    upload = postmortem_upload(
                        draft.markdown,
                        record.run_id,
                        drafted_by=draft.narrative.drafted_by,
                        problem=draft.narrative.problem,
                    )
                    self._outbox.enqueue("files_upload_v2", record.channel, thread_ts=record.thread_ts, **upload)
                case DraftKind.STATUS:
                    update = await draft_status(facts, self._llm)
                    message = status_message(
                        update.title,
                        update.parts,
                        drafted_by=update.narrative.drafted_by,
                        problem=update.narrative.problem,
                    )
                    self._outbox.enqueue(
                        "chat_postMessage", record.channel, thread_ts=record.thread_ts, **message.as_kwargs()
                    )
                case _:
                    assert_never(kind)
            log.info("draft_posted")
        except StoreUnavailableError as exc:
            log.error("draft_store_unavailable", error=str(exc)[:300])
            self._reply(
                record.channel, record.thread_ts, "No draft: OpsAgent cannot reach its run store. Ask again shortly."
            )
        except Exception:  # a bug of ours: said in the thread, the details in the logs
            log.exception("draft_failed")
            self._reply(record.channel, record.thread_ts, "❌ The draft failed inside OpsAgent. The logs have details.")

    async def close(self, *, timeout_s: float) -> None:
        """Let the drafts in progress finish (within `timeout_s`), then cancel the rest."""
        tasks = list(self._tasks)
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=timeout_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def _reply(self, channel: str, thread_ts: str, text: str) -> None:
        self._outbox.enqueue("chat_postMessage", channel, thread_ts=thread_ts, text=text)
