"""Where an admitted request goes: each kind to the one service that does it, and what its asker is told.

Every listener hands its request here: the gate first, then one `match` over the closed union of requests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import assert_never

import structlog

from bot.access.askers import Person
from bot.access.refusals import AccessRefused, RefusalReason
from bot.approvals.broker import ApprovalBroker
from bot.approvals.outcomes import ApprovalRefused, Decided
from bot.drafts.service import DraftService
from bot.gate.gate import Admitted, Gate
from bot.gate.requests import (
    AskDraft,
    Decide,
    Explain,
    Guidance,
    Investigate,
    NoTask,
    NoTaskReason,
    Rate,
    Request,
    StopRun,
)
from bot.runs.feedback import FeedbackService
from bot.runs.guidance import Kept, NotKept
from bot.runs.service import InvestigationService
from bot.slack.approval_words import click_refused_text
from bot.slack.blocks import ephemeral
from bot.slack.outbox import Outbox
from bot.slack.refusals import refusal_text

log = structlog.get_logger("opsagent.slack")

ASK_FOR_A_TASK = "Tell me what to investigate, e.g. “@opsagent order-service 5xx jumped to 12%, find the root cause”."
NOTHING_RUNNING = "No investigation is running in this thread."
ALREADY_ENDED = "That investigation has already ended."
GUIDANCE_NOT_KEPT = "Not passed on: OpsAgent cannot reach its run store just now. Say it again in a moment."

Respond = Callable[..., Awaitable[object]]
"""Bolt's `respond`: answers an interaction through its `response_url`."""


class Answer:
    """How one request's asker is answered: privately (through the click's `response_url` when there is one, else
    an ephemeral in the thread), or in the thread for all to see."""

    def __init__(self, outbox: Outbox, request: Request, respond: Respond | None = None) -> None:
        self._outbox = outbox
        self._request = request
        self._respond = respond

    async def privately(self, text: str) -> None:
        """Words for the asker alone; a bot or a service is not answered privately."""
        asker, place = self._request.asker, self._request.place
        if not isinstance(asker, Person) or not place.channel:
            return
        message = ephemeral(text)
        if self._respond is not None:
            try:
                await self._respond(
                    text=message.text, blocks=message.blocks, response_type="ephemeral", replace_original=False
                )
                return
            except Exception as exc:  # the response_url expired or failed: the ephemeral below says it instead
                log.info("ephemeral_failed", error=str(exc)[:200])
        self._outbox.enqueue(
            "chat_postEphemeral",
            place.channel,
            user=asker.user,
            thread_ts=place.thread_ts,
            text=message.text,
            blocks=message.blocks,
        )

    def in_thread(self, text: str) -> None:
        """A reply of ours in the request's thread."""
        place = self._request.place
        self._outbox.enqueue("chat_postMessage", place.channel, thread_ts=place.thread_ts, text=text)


class Router:
    """The gate, then the service of each request kind."""

    def __init__(
        self,
        *,
        gate: Gate,
        investigations: InvestigationService,
        drafts: DraftService,
        broker: ApprovalBroker,
        feedback: FeedbackService,
        outbox: Outbox,
    ) -> None:
        self._gate = gate
        self._investigations = investigations
        self._drafts = drafts
        self._broker = broker
        self._feedback = feedback
        self._outbox = outbox

    async def route(self, request: Request, respond: Respond | None = None) -> None:
        """Admit `request` and hand it to its service, or tell its asker why not (bots are not answered)."""
        answer = Answer(self._outbox, request, respond)
        match admission := await self._gate.admit(request):
            case AccessRefused():
                if admission.reason is not RefusalReason.BOT:
                    requested_by = request.run.requested_by if isinstance(request, StopRun) else ""
                    approvers = self._broker.approvers()
                    now = self._gate.now()
                    await answer.privately(
                        refusal_text(admission, now=now, approvers=approvers, requested_by=requested_by)
                    )
            case Admitted():
                await self._admitted(admission, answer)
            case _:
                assert_never(admission)

    async def _admitted(self, admitted: Admitted[Request], answer: Answer) -> None:
        request = admitted.request
        match request:
            case Investigate():
                await self._investigations.start(admitted.narrow(request))
            case Guidance():
                await self._guide(admitted.narrow(request), answer)
            case StopRun():
                if not await self._investigations.stop_requested(admitted.narrow(request)):
                    await answer.privately(ALREADY_ENDED)
            case AskDraft():
                self._drafts.asked(admitted.narrow(request))
            case Decide():
                await self._decide(request, answer)
            case Rate():
                await self._feedback.rated(admitted.narrow(request))
            case Explain():
                await self._feedback.explained(admitted.narrow(request))
            case NoTask():
                await self._no_task(request, answer)
            case _:
                assert_never(request)

    async def _guide(self, admitted: Admitted[Guidance], answer: Answer) -> None:
        match outcome := await self._investigations.guidance.given(admitted):
            case Kept():
                pass  # the ✍️ on the message says it; the summary says when the run takes it
            case AccessRefused():
                await answer.privately(refusal_text(outcome, now=self._gate.now(), approvers=self._broker.approvers()))
            case NotKept():
                await answer.privately(GUIDANCE_NOT_KEPT)
            case _:
                assert_never(outcome)

    async def _decide(self, decide: Decide, answer: Answer) -> None:
        outcome = await self._broker.decide(
            decide.approval_id,
            user_id=decide.asker.user if isinstance(decide.asker, Person) else "",
            channel=decide.place.channel,
            message_ts=decide.place.message_ts,
            approve=decide.approve,
        )
        match outcome:
            case ApprovalRefused():
                await answer.privately(click_refused_text(outcome))
            case Decided():
                pass
            case _:
                assert_never(outcome)

    async def _no_task(self, request: NoTask, answer: Answer) -> None:
        match request.why:
            case NoTaskReason.EMPTY:
                answer.in_thread(ASK_FOR_A_TASK)
            case NoTaskReason.NOTHING_RUNNING:
                answer.in_thread(NOTHING_RUNNING)
            case NoTaskReason.RUN_ENDED:
                await answer.privately(ALREADY_ENDED)
            case NoTaskReason.UNREADABLE:
                log.warning("request_unreadable", channel=request.place.channel)
            case _:
                assert_never(request.why)
