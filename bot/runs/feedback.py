"""A person's 👍/👎 on a run's verdict, and why for a 👎: kept in the run store (each person's latest rating wins)
and in the audit log. The listeners hand each click and each submitted reason here.

A 👎 opens a modal asking why (optional) at once, since Slack's `trigger_id` is good for 3 seconds only.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.audit.trail import AuditKind, AuditTrail
from bot.slack.feedback import feedback_click, reason_modal, submitted_reason
from bot.store.protocol import RunStore, StoreUnavailableError
from bot.store.records import FeedbackRecord, Rating, utc_now

log = structlog.get_logger("opsagent.feedback")


class FeedbackService:
    """Keeps people's ratings of runs; clicks on a run of another channel, or on no known run, are dropped."""

    def __init__(
        self,
        *,
        store: RunStore,
        client: AsyncWebClient,
        audit: AuditTrail,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._store = store
        self._client = client
        self._audit = audit
        self._clock = clock

    async def rated(self, *, value: str, user: str, channel: str, trigger_id: str) -> None:
        """A click on a run's feedback buttons (`value` is the clicked button's); a 👎 asks why, in a modal."""
        click = feedback_click(value)
        if click is None:
            log.warning("feedback_unreadable", user=user, channel=channel)
            return
        rating = Rating.UP if click.thumb == "up" else Rating.DOWN
        if rating is Rating.DOWN and trigger_id:
            await self._ask_why(click.run_id, user, trigger_id)
        await self._keep(click.run_id, user, rating, "", channel=channel)

    async def explained(self, *, view: dict[str, Any], user: str) -> None:
        """The reason modal, submitted: the 👎 is kept again, with the reason (empty: the 👎 stands alone)."""
        run_id, reason = submitted_reason(view)
        if run_id:
            await self._keep(run_id, user, Rating.DOWN, reason.strip())

    async def _ask_why(self, run_id: str, user: str, trigger_id: str) -> None:
        try:
            await self._client.views_open(trigger_id=trigger_id, view=reason_modal(run_id))
        except Exception as exc:  # no modal: the 👎 is kept all the same
            log.info("feedback_modal_failed", run_id=run_id, user=user, error=str(exc)[:200])

    async def _keep(self, run_id: str, user: str, rating: Rating, reason: str, *, channel: str = "") -> None:
        try:
            record = await self._store.get_run(run_id)
            if record is None or (channel and record.channel != channel):
                log.warning("feedback_for_no_such_run", run_id=run_id, user=user, channel=channel)
                return
            await self._store.record_feedback(
                FeedbackRecord(run_id=run_id, user=user, rating=rating, reason=reason, at=self._clock())
            )
        except StoreUnavailableError as exc:
            log.error("feedback_not_kept", run_id=run_id, user=user, error=str(exc)[:300])
            return
        log.info("feedback_given", run_id=run_id, user=user, rating=str(rating), reason_given=bool(reason))
        await self._audit.record(AuditKind.FEEDBACK_GIVEN, run_id=run_id, actor=user, rating=str(rating), reason=reason)
