"""A person's 👍/👎 on a run's verdict, and why for a 👎: kept in the run store (each person's latest rating wins)
and in the audit log. The listeners hand each admitted click and submitted reason here.

A 👎 opens a modal asking why (optional) at once, since Slack's `trigger_id` is good for 3 seconds only.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.access.askers import requester
from bot.audit.trail import AuditKind, AuditTrail
from bot.gate.gate import Admitted
from bot.gate.requests import Explain, Rate
from bot.slack.feedback import reason_modal
from bot.store.ports import FeedbackStore
from bot.store.protocol import StoreUnavailableError
from bot.store.records import FeedbackRecord, Rating, utc_now

log = structlog.get_logger("opsagent.feedback")


class FeedbackService:
    """Keeps the ratings the gate admitted: who may rate is `[access] who_may_rate`, and a reason is kept only from
    the modal a 👎 of the same person on the same run opened."""

    def __init__(
        self,
        *,
        store: FeedbackStore,
        client: AsyncWebClient,
        audit: AuditTrail,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._store = store
        self._client = client
        self._audit = audit
        self._clock = clock

    async def rated(self, admitted: Admitted[Rate]) -> None:
        """A 👍/👎 on a run's verdict, kept as the person's latest rating; a 👎 asks why, in a modal opened first
        (its trigger is good for 3 s). The modal's submission is admitted only against the 👎 kept here, which
        is written long before a person can type a reason and submit."""
        rate = admitted.request
        user = requester(rate.asker)
        if rate.rating is Rating.DOWN and rate.trigger_id:
            await self._ask_why(rate.run.run_id, user, rate.trigger_id)
        await self._keep(rate.run.run_id, user, rate.rating, "")

    async def explained(self, admitted: Admitted[Explain]) -> None:
        """The reason modal, submitted: the 👎 is kept again, with the reason (empty: the 👎 stands alone)."""
        explain = admitted.request
        await self._keep(explain.run.run_id, requester(explain.asker), Rating.DOWN, explain.reason)

    async def _ask_why(self, run_id: str, user: str, trigger_id: str) -> None:
        try:
            await self._client.views_open(trigger_id=trigger_id, view=reason_modal(run_id))
        except Exception as exc:  # no modal: the 👎 is kept all the same
            log.info("feedback_modal_failed", run_id=run_id, user=user, error=str(exc)[:200])

    async def _keep(self, run_id: str, user: str, rating: Rating, reason: str) -> None:
        """Keep the rating (and the audit line); a store that cannot is logged."""
        try:
            await self._store.record_feedback(
                FeedbackRecord(run_id=run_id, user=user, rating=rating, reason=reason, at=self._clock())
            )
        except StoreUnavailableError as exc:
            log.error("feedback_not_kept", run_id=run_id, user=user, error=str(exc)[:300])
            return
        log.info("feedback_given", run_id=run_id, user=user, rating=str(rating), reason_given=bool(reason))
        await self._audit.record(AuditKind.FEEDBACK_GIVEN, run_id=run_id, actor=user, rating=str(rating), reason=reason)
