"""The side-effect tools the model may ask for: `rollback_deployment` and `restart_service`, through the webhook.

Each runs only behind the kernel's side-effect policy and a human approval; under dry_run it answers with the
request exactly as it would be sent.
"""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import Field

from kernel import CallContext, Tool, ToolOutput, tool_from_function
from opsagent_tools.actions.webhook import ActionRequest, ActionWebhook


def action_tools(webhook: ActionWebhook) -> list[Tool]:
    """The side-effect tools; each runs only through the kernel's policy and a human approval."""

    async def rollback_deployment(
        service: Annotated[str, Field(description="The service to roll back, e.g. order-service.")],
        to_version: Annotated[str, Field(description="The version to return to: the last good tag, e.g. v2.13.2.")],
        ctx: CallContext,
    ) -> ToolOutput:
        """Roll a service back to an earlier version through the operator's deployment system.
        Use it only when the evidence points at a deploy (the change point follows the deploy event and the diff
        explains the errors); name the last good version. A human must approve; a denial is final."""
        sent = await webhook.send(webhook.prepare("rollback_deployment", _params(service, to_version), ctx), ctx)
        return ToolOutput(sent.outcome, headline=f"rollback {service} → {to_version}: {sent.summary()}")

    async def preview_rollback(service: str, to_version: str, ctx: CallContext) -> ToolOutput:
        request = webhook.prepare("rollback_deployment", _params(service, to_version), ctx)
        return _preview(request, f"rollback {service} → {to_version}")

    async def restart_service(
        service: Annotated[str, Field(description="The service whose instances to restart.")],
        ctx: CallContext,
    ) -> ToolOutput:
        """Restart a service's instances (a rolling restart) through the operator's deployment system.
        Use it for a stuck process (leak, deadlock, exhausted pool that does not recover); it does not fix a bad
        deploy. A human must approve; a denial is final."""
        sent = await webhook.send(webhook.prepare("restart_service", _params(service), ctx), ctx)
        return ToolOutput(sent.outcome, headline=f"restart {service}: {sent.summary()}")

    async def preview_restart(service: str, ctx: CallContext) -> ToolOutput:
        return _preview(webhook.prepare("restart_service", _params(service), ctx), f"restart {service}")

    return [
        tool_from_function(
            rollback_deployment,
            summary="Roll a service back to an earlier version, through the deployment system's webhook",
            side_effect=True,
            preview=preview_rollback,
            timeout=30.0,
            returns="the receiver's answer, or why the action did not run",
        ),
        tool_from_function(
            restart_service,
            summary="Restart a service's instances one by one, through the deployment system's webhook",
            side_effect=True,
            preview=preview_restart,
            timeout=30.0,
            returns="the receiver's answer, or why the action did not run",
        ),
    ]


def _preview(request: ActionRequest, what: str) -> ToolOutput:
    """A dry run's answer: the request exactly as it would be sent, and for people what it would do."""
    text = json.dumps(request.describe(), ensure_ascii=False, default=str)
    return ToolOutput(text, headline=f"dry run: {what} (not sent)")


def _params(service: str, to_version: str | None = None) -> dict[str, str]:
    return {"service": service} if to_version is None else {"service": service, "to_version": to_version}
