"""Button listeners: Approve and Deny go to the approval broker, Stop to the investigation service, 👍/👎 to feedback.

Each acks first (Slack wants an answer within 3 s), then decides (who may, by the clicker's workspace and standing);
a refusal is said to the clicker alone.
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp

from bot.approvals.broker import ApprovalBroker
from bot.approvals.outcomes import Decided
from bot.runs.feedback import FeedbackService
from bot.runs.service import InvestigationService
from bot.slack.action_ids import APPROVE, DENY, FEEDBACK, STOP
from bot.slack.blocks import ephemeral

log = structlog.get_logger("opsagent.slack")


def register(
    app: AsyncApp, *, investigations: InvestigationService, broker: ApprovalBroker, feedback: FeedbackService
) -> None:
    """Register the button listeners on `app`."""

    @app.action(APPROVE)
    async def on_approve(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        await _decide(broker, body, respond, approve=True)

    @app.action(DENY)
    async def on_deny(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        await _decide(broker, body, respond, approve=False)

    @app.action(STOP)
    async def on_stop(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        user = body["user"]
        team = user.get("team_id") or body.get("team", {}).get("id", "")
        answer = await investigations.request_stop(body["actions"][0]["value"], user=user["id"], teams=(team,))
        await _ephemeral(respond, answer.text)

    @app.action(FEEDBACK)
    async def on_feedback(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        await feedback.rated(
            value=str(body["actions"][0].get("value") or ""),
            user=body["user"]["id"],
            channel=body.get("channel", {}).get("id", ""),
            trigger_id=str(body.get("trigger_id") or ""),
        )


async def _decide(broker: ApprovalBroker, body: dict[str, Any], respond: Any, *, approve: bool) -> None:
    action = body["actions"][0]
    outcome = await broker.decide(
        action["value"],
        user_id=body["user"]["id"],
        team_id=body["user"].get("team_id") or body.get("team", {}).get("id", ""),
        channel=body.get("channel", {}).get("id", ""),
        message_ts=body.get("container", {}).get("message_ts", ""),
        approve=approve,
    )
    if not isinstance(outcome, Decided):
        await _ephemeral(respond, outcome.message)


async def _ephemeral(respond: Any, text: str) -> None:
    message = ephemeral(text)
    try:
        await respond(text=message.text, blocks=message.blocks, response_type="ephemeral", replace_original=False)
    except Exception as exc:  # a lost ephemeral is not worth more than a log line
        log.info("ephemeral_failed", error=str(exc)[:200])
