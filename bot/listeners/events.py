"""Event listeners: an `app_mention` starts, follows up on or stops an investigation.

Bolt acks events itself once the handler returns; the service only queues Slack work, so it returns at once.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.runs.service import InvestigationService


def register(app: AsyncApp, *, investigations: InvestigationService) -> None:
    """Register the event listeners on `app`."""

    @app.event("app_mention")
    async def on_mention(body: dict[str, Any], event: dict[str, Any]) -> None:
        await investigations.on_mention(event_id=body.get("event_id", ""), event=event)
