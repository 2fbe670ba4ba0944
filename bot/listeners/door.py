"""Slack's door: every payload the app takes (a mention, a button click, a modal submission) read once, here,
into a typed request for the gate.

The door knows Slack's shapes and nothing of the rules: it says who asks, where, and what, resolves the run a
request is about (or finds there is none), drops Slack's retries, and redacts every text where it enters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.access.askers import clicker, message_author
from bot.gate.requests import (
    AskDraft,
    Decide,
    DraftKind,
    Explain,
    Guidance,
    Investigate,
    NoTask,
    NoTaskReason,
    Place,
    Rate,
    Request,
    StopRun,
)
from bot.slack.action_ids import APPROVE, DENY, FEEDBACK, STOP
from bot.slack.feedback import feedback_click, submitted_reason
from bot.slack.mrkdwn import without_mentions
from bot.store.ports import Dedupe, RunLookup
from bot.store.records import Rating, RunStatus
from kernel import Redactor

DEDUPE_TTL_S = 3600.0
"""How long event ids and message keys are remembered (Slack retries within about 6 minutes)."""
STOP_WORDS = frozenset({"stop", "cancel", "abort"})
DRAFT_WORDS = {
    "postmortem": DraftKind.POSTMORTEM,
    "post-mortem": DraftKind.POSTMORTEM,
    "postmortem draft": DraftKind.POSTMORTEM,
    "draft the postmortem": DraftKind.POSTMORTEM,
    "status": DraftKind.STATUS,
    "status update": DraftKind.STATUS,
}
"""A mention that is one of these (after the @-mention, any case, a final full stop aside) asks for a draft."""


def draft_asked(text: str) -> DraftKind | None:
    """The draft a mention's text asks for, or None when it asks for something else (an investigation)."""
    return DRAFT_WORDS.get(" ".join(text.lower().split()).rstrip(".!"))


class SlackDoor:
    """Reads Slack's payloads into requests."""

    def __init__(self, *, runs: RunLookup, dedupe: Dedupe, redactor: Redactor) -> None:
        self._runs = runs
        self._dedupe = dedupe
        self._redactor = redactor

    async def mention(self, body: Mapping[str, Any]) -> Request | None:
        """An `app_mention` event: a new investigation, a follow-up, guidance, a Stop or a draft; None for a retry
        or a double delivery already taken (on any replica)."""
        event = body["event"]
        channel, ts = str(event["channel"]), str(event["ts"])
        event_id = str(body.get("event_id") or "")
        if not await self._first_time(f"event:{event_id}") or not await self._first_time(f"message:{channel}:{ts}"):
            return None
        asker = message_author(event)
        place = Place(channel, str(event.get("thread_ts") or ts), ts)
        text = self._redactor.redact(without_mentions(str(event.get("text") or "")))
        latest = await self._runs.run_in_thread(channel, place.thread_ts)
        running = latest if latest is not None and latest.status is not RunStatus.FINISHED else None
        if text.lower() in STOP_WORDS:
            return StopRun(asker, place, running) if running else NoTask(asker, place, NoTaskReason.NOTHING_RUNNING)
        if (kind := draft_asked(text)) is not None:
            return AskDraft(asker, place, kind, latest)
        if running is not None:
            return Guidance(asker, place, running, text)
        if not text:
            return NoTask(asker, place, NoTaskReason.EMPTY)
        return Investigate(asker, place, text, earlier=latest)

    async def click(self, body: Mapping[str, Any]) -> Request:
        """A `block_actions` payload: Approve, Deny, Stop, or a 👍/👎 on a verdict."""
        action = (body.get("actions") or [{}])[0]
        action_id, value = str(action.get("action_id") or ""), str(action.get("value") or "")
        container = body.get("container") or {}
        message_ts = str(container.get("message_ts") or "")
        thread_ts = str(container.get("thread_ts") or (body.get("message") or {}).get("thread_ts") or message_ts)
        place = Place(str((body.get("channel") or {}).get("id") or ""), thread_ts, message_ts)
        asker = clicker(body)
        if action_id in (APPROVE, DENY):
            return Decide(asker, place, value, approve=action_id == APPROVE)
        if action_id == STOP:
            run = await self._runs.get_run(value) if value else None
            if run is None or run.status is RunStatus.FINISHED:
                return NoTask(asker, place, NoTaskReason.RUN_ENDED)
            return StopRun(asker, place, run)
        click = feedback_click(value) if action_id == FEEDBACK else None
        run = await self._runs.get_run(click.run_id) if click is not None else None
        if click is None or run is None or run.channel != place.channel:
            return NoTask(asker, place, NoTaskReason.UNREADABLE)
        rating = Rating.UP if click.thumb == "up" else Rating.DOWN
        return Rate(asker, place, run, rating, trigger_id=str(body.get("trigger_id") or ""))

    async def submission(self, body: Mapping[str, Any]) -> Request:
        """A `view_submission` of the 👎 modal: why the verdict was wrong."""
        run_id, reason = submitted_reason(body.get("view") or {})
        asker = clicker(body)
        run = await self._runs.get_run(run_id) if run_id else None
        if run is None:
            return NoTask(asker, Place(""), NoTaskReason.UNREADABLE)
        return Explain(asker, Place(run.channel, run.thread_ts), run, self._redactor.redact(reason.strip()))

    async def _first_time(self, key: str) -> bool:
        return await self._dedupe.remember(key, DEDUPE_TTL_S)
