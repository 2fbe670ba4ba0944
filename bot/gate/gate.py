"""The admission gate: every request, from every way in, is admitted or refused here before a service reads it.

Who asks comes first (the workspace the payload names, then Slack's directory: guest, bot, deactivated,
approver), then where and how much (channels, rate limits, the spend cap) for what starts work for the model.
A refusal is one fact (`AccessRefused`), logged and audited here; the listeners word it for the person.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar, assert_never, cast

import structlog

from bot.access.askers import ApiClient, Asker, Bot, Person, Service, requester
from bot.access.identity import Identities, Standing
from bot.access.policy import AccessPolicy, Counted, RunRequest
from bot.access.refusals import AccessRefused, Action, RefusalReason
from bot.access.settings import AccessSettings, Raters, Stoppers
from bot.audit.trail import AuditKind, AuditTrail
from bot.gate.requests import (
    AskDraft,
    Decide,
    Explain,
    Guidance,
    Investigate,
    NoTask,
    Rate,
    Request,
    StopRun,
    action_of,
)
from bot.store.ports import FeedbackStore
from bot.store.records import Rating

log = structlog.get_logger("opsagent.gate")

GUIDANCE_CHARS = 4000
"""The longest guidance a person may give in one message."""

R = TypeVar("R", bound=Request)
S = TypeVar("S", bound=Request)


@dataclass(frozen=True, slots=True)
class Admitted(Generic[R]):
    """A request the gate let through, at `at`; `counted`: its start, when it counts against the limits (a run or
    a draft), until the gate withdraws it. Services take only these."""

    request: R
    at: datetime
    counted: Counted | None = None
    name: str = ""
    """How the asker is named to people and to the model: the name Slack shows for a person ("" when it cannot
    say), a service's or an allowed bot's own."""

    def narrow(self, request: S) -> Admitted[S]:
        """This admission, typed by the request a `match` narrowed it to (that request must be this one's)."""
        if request is not self.request:
            raise ValueError("narrow() takes the admitted request itself")
        return cast(Admitted[S], self)


class Gate:
    """Admits or refuses each request by its kind and its asker; the one place the access rules apply."""

    def __init__(
        self,
        *,
        identities: Identities,
        access: AccessPolicy,
        ratings: FeedbackStore,
        audit: AuditTrail,
    ) -> None:
        self._identities = identities
        self._access = access
        self._ratings = ratings
        self._audit = audit

    @property
    def settings(self) -> AccessSettings:
        """The `[access]` settings the gate applies."""
        return self._access.settings

    def now(self) -> datetime:
        """The time by the gate's clock (the one its limits count by)."""
        return self._access.now()

    async def admit(self, request: R) -> Admitted[R] | AccessRefused:
        """Admit `request`, or refuse it (logged and audited): who asks, then the limits of what starts work."""
        refused = await self._who(request)
        counted: Counted | None = None
        if refused is None and (work := self._work(request)) is not None:
            match outcome := self._access.admit(work):
                case Counted():
                    counted = outcome
                case AccessRefused():
                    refused = outcome
                case _:
                    assert_never(outcome)
        if refused is None and isinstance(request, Guidance) and len(request.text) > GUIDANCE_CHARS:
            refused = AccessRefused(RefusalReason.GUIDANCE_TOO_LONG, action_of(request), limit=GUIDANCE_CHARS)
        if refused is not None:
            await self._record(request, refused)
            return refused
        return Admitted(request, self._access.now(), counted, await self._name(request.asker))

    def withdraw(self, admitted: Admitted[Investigate] | Admitted[AskDraft]) -> None:
        """Admitted work did not start after all (the store could not be reached, or another run got the thread):
        its start no longer counts against the limits."""
        if admitted.counted is not None:
            self._access.withdraw(admitted.counted)

    async def at_capacity(self, admitted: Admitted[Investigate]) -> AccessRefused:
        """The run store refused an admitted run: every slot of `max_concurrent_runs` is held. Withdrawn, logged
        and audited; the refusal to tell the asker."""
        refused = AccessRefused(
            RefusalReason.CONCURRENT_RUNS, action_of(admitted.request), limit=self.settings.max_concurrent_runs
        )
        if admitted.counted is not None:
            refused = self._access.at_capacity(admitted.counted)
        await self._record(admitted.request, refused)
        return refused

    async def guidance_full(self, admitted: Admitted[Guidance]) -> AccessRefused:
        """The run already holds `max_guidance` messages (counted by the store, as it keeps them): logged and
        audited; the refusal to tell the asker."""
        refused = AccessRefused(RefusalReason.GUIDANCE_LIMIT, Action.GUIDE, limit=self.settings.max_guidance)
        await self._record(admitted.request, refused)
        return refused

    async def _name(self, asker: Asker) -> str:
        match asker:
            case Person(user=user):
                return await self._identities.name_of(user)
            case Bot() | Service():
                return requester(asker)
            case ApiClient(name=name):
                return f"API client {name}"
            case _:
                assert_never(asker)

    async def _who(self, request: Request) -> AccessRefused | None:
        """Why the asker may not make this request; None when they may."""
        action = action_of(request)
        match request.asker:
            case Service():
                return None  # it proved itself at its own door (Alertmanager's bearer token)
            case ApiClient():  # its bearer token proved it at the API's door; it has no standing in Slack
                allowed = isinstance(request, Investigate | Guidance)
                return None if allowed else AccessRefused(RefusalReason.API_CLIENT, action)
            case Bot(bot_id=bot_id):
                mentioned = isinstance(request, Investigate | AskDraft | Guidance | NoTask)
                allowed = mentioned and bot_id in self.settings.allowed_bots
                return None if allowed else AccessRefused(RefusalReason.BOT, action)
            case Person() as person:
                needs = self._standing(request, person)
                reason = await self._identities.refusal(person, needs) if needs is not None else None
                if reason is None and isinstance(request, Explain) and not await self._opened_by(request, person):
                    reason = RefusalReason.NOT_THEIR_MODAL
                return AccessRefused(reason, action) if reason is not None else None
            case _:
                assert_never(request.asker)

    def _standing(self, request: Request, person: Person) -> Standing | None:
        """The standing `person` needs for `request`; None when being who they are is enough."""
        match request:
            case Investigate() | AskDraft() | Guidance() | NoTask():
                return Standing.ASKER
            case StopRun(run=run):
                if person.user == run.requested_by:
                    return None  # whoever asked for a run may always stop it
                return Standing.MEMBER if self.settings.who_may_stop is Stoppers.MEMBERS else Standing.APPROVER
            case Decide():
                return Standing.APPROVER
            case Rate() | Explain():
                return Standing.ASKER if self.settings.who_may_rate is Raters.ASKERS else Standing.APPROVER
            case _:
                assert_never(request)

    def _work(self, request: Request) -> RunRequest | None:
        """What a request starts for the model, as the limits count it; None for what starts nothing."""
        match request:
            case Investigate() | AskDraft():
                per_user = not isinstance(request.asker, Service)
                user = requester(request.asker)
                return RunRequest(user, request.place.channel, per_user=per_user, action=action_of(request))
            case Guidance() | StopRun() | Decide() | Rate() | Explain() | NoTask():
                return None
            case _:
                assert_never(request)

    async def _opened_by(self, explain: Explain, person: Person) -> bool:
        """Whether a 👎 of `person` on the run stands, which is what opened the modal they submitted: the bot opens
        the modal only after keeping that 👎, so a submission without one is not from a modal of theirs."""
        ratings = await self._ratings.feedback_for(explain.run.run_id)
        return any(r.user == person.user and r.rating is Rating.DOWN for r in ratings)

    async def _record(self, request: Request, refused: AccessRefused) -> None:
        asker = requester(request.asker)
        run_id = _run_of(request)
        log.warning(
            "request_refused",
            request=type(request).__name__,
            action=str(refused.action),
            reason=str(refused.reason),
            user=asker,
            channel=request.place.channel,
            teams=list(request.asker.teams) if isinstance(request.asker, Person) else None,
            run_id=run_id,
            retry_at=refused.retry_at.isoformat() if refused.retry_at else None,
        )
        await self._audit.record(
            AuditKind.REQUEST_REFUSED,
            run_id=run_id,
            actor=asker,
            request=type(request).__name__,
            action=str(refused.action),
            reason=str(refused.reason),
            channel=request.place.channel,
        )


def _run_of(request: Request) -> str:
    """The run a request is about, for the audit log; "" for one about no run yet."""
    match request:
        case Guidance(run=run) | StopRun(run=run) | Rate(run=run) | Explain(run=run):
            return run.run_id
        case AskDraft(run=run):
            return run.run_id if run is not None else ""
        case Investigate() | Decide() | NoTask():
            return ""
        case _:
            assert_never(request)
