"""Every listener of the Slack app, registered in one place: each acks at once, reads its payload at the door into a
request, and hands it to the router, whose gate admits or refuses it before any service sees it.

Nothing slow runs inside a listener: the services queue their Slack work and return.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.gate.requests import Request
from bot.listeners.door import SlackDoor
from bot.listeners.router import Respond, Router
from bot.slack.action_ids import APPROVE, DENY, FEEDBACK, FEEDBACK_REASON, STOP

Listener = Callable[..., Awaitable[None]]
Read = Callable[[Mapping[str, Any]], Awaitable[Request | None]]


def register_listeners(app: AsyncApp, *, door: SlackDoor, router: Router) -> list[Listener]:
    """Register every listener on `app`: the mention event, the buttons and the 👎 modal; the listeners, each of
    which goes through the gate (what the tests walk)."""
    on_mention = gated("mention", door.mention, router)
    on_click = gated("click", door.click, router)
    on_reason = gated("reason", door.submission, router)
    app.event("app_mention")(on_mention)
    for action_id in (APPROVE, DENY, STOP, FEEDBACK):
        app.action(action_id)(on_click)
    app.view(FEEDBACK_REASON)(on_reason)
    return [on_mention, on_click, on_reason]


def gated(name: str, read: Read, router: Router) -> Listener:
    """A Bolt listener that acks, reads the payload at the door and routes the request through the gate; a payload
    the door drops (a retried event) ends there."""

    async def listener(ack: Callable[..., Awaitable[None]], body: dict[str, Any], respond: Respond | None) -> None:
        await ack()  # events, clicks and closing the modal: Slack wants an answer within 3 s
        request = await read(body)
        if request is not None:  # only a click carries a response_url; Bolt's `respond` raises without one
            await router.route(request, respond if body.get("response_url") else None)

    listener.__name__ = f"on_{name}"
    return listener


__all__ = ["register_listeners"]
