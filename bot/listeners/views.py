"""Modal listeners: the reason for a 👎, submitted, goes to the feedback service.

Acked at once with no body, which closes the modal (Slack wants an answer within 3 s); the reason is kept after.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.runs.feedback import FeedbackService
from bot.slack.action_ids import FEEDBACK_REASON


def register(app: AsyncApp, *, feedback: FeedbackService) -> None:
    """Register the modal listeners on `app`."""

    @app.view(FEEDBACK_REASON)
    async def on_reason(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        await feedback.explained(view=body.get("view") or {}, user=body["user"]["id"])
