"""Every listener of the Slack app, registered in one place (Bolt's starter layout: one module per kind).

Each handler acks at once and hands the work to a service; nothing slow runs inside a listener.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.approvals.broker import ApprovalBroker
from bot.listeners import actions, events, views
from bot.runs.feedback import FeedbackService
from bot.runs.service import InvestigationService


def register_listeners(
    app: AsyncApp, *, investigations: InvestigationService, broker: ApprovalBroker, feedback: FeedbackService
) -> None:
    """Register the event, action and view listeners on `app`."""
    events.register(app, investigations=investigations)
    actions.register(app, investigations=investigations, broker=broker, feedback=feedback)
    views.register(app, feedback=feedback)


__all__ = ["register_listeners"]
