"""The Slack app: a factory that wires the Bolt `AsyncApp` to the services, listeners in one place.

Handlers ack at once and hand the work to `InvestigationService` and `ApprovalBroker`; nothing slow
runs inside a listener. HTTP mode serves `POST /slack/events` (signature-verified by Bolt).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, model_validator
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.access import AccessPolicy, AccessSettings
from bot.approval_outcomes import Decided
from bot.approvals import ApprovalBroker, ApproverPolicy
from bot.audit import AuditTrail
from bot.blocks import ephemeral
from bot.investigations import AgentFactory, InvestigationService, RunObserver, TraceLink
from bot.outbox import POST_INTERVAL_S, Outbox
from bot.replica import APPROVALS_TOPIC, ReplicaDuties, replica_id
from bot.run_store import LEASE_TTL_S, RunStore
from bot.slack_ui import SlackApprovalUI, SlackDirectory

log = structlog.get_logger("opsagent.slack")

APPROVE, DENY, STOP = "opsagent_approve", "opsagent_deny", "opsagent_stop"


class SlackSettings(BaseModel):
    """`[slack]`: who may approve, limits of the bot. Tokens come from the environment only."""

    model_config = ConfigDict(extra="forbid")

    approvers: list[str] = Field(default_factory=list)
    """Slack user ids allowed to approve side effects."""
    approver_groups: list[str] = Field(default_factory=list)
    """Slack user group ids (S…) whose members may approve."""
    allow_self_approval: bool = False
    """Whether the person who started a run may approve its actions (a two-person rule when False)."""
    approval_ttl_s: float = Field(default=900.0, gt=0)
    """Pending approvals expire (as a denial) after this long."""
    post_interval_s: float = Field(default=POST_INTERVAL_S, ge=0)
    """Spacing of messages per channel (Slack allows about one per second)."""

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "max_concurrent_runs" in data:
            raise ValueError(
                "`max_concurrent_runs` moved from [slack] to [access]: move that line to an [access] section"
            )
        return data


@dataclass(frozen=True)
class SlackSecrets:
    """The app's credentials and endpoint, from `SLACK_BOT_TOKEN`, `SLACK_SIGNING_SECRET`, `SLACK_APP_TOKEN`, `SLACK_API_URL`."""

    bot_token: str
    signing_secret: str | None
    app_token: str | None
    api_url: str | None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> SlackSecrets:
        """Read them; a missing bot token is a configuration error."""
        token = environ.get("SLACK_BOT_TOKEN", "")
        if not token:
            raise ValueError("SLACK_BOT_TOKEN is not set: the bot token (xoxb-…) of the Slack app")
        return cls(
            token,
            environ.get("SLACK_SIGNING_SECRET") or None,
            environ.get("SLACK_APP_TOKEN") or None,
            environ.get("SLACK_API_URL") or None,
        )


@dataclass
class SlackServices:
    """What the listeners hand work to."""

    app: AsyncApp
    client: AsyncWebClient
    outbox: Outbox
    broker: ApprovalBroker
    investigations: InvestigationService
    duties: ReplicaDuties
    store: RunStore
    routes: list[web.RouteDef] = field(default_factory=list)
    """HTTP routes besides `/slack/events` and `/healthz` that components add (served in both modes)."""

    async def start(self) -> None:
        """Resume the saved runs nobody carries, and start the replica's background duties."""
        await self.duties.start()

    async def close(self, *, timeout_s: float) -> None:
        """Stop the duties (no more take-overs), then stop taking work and save and announce the runs in flight."""
        await self.duties.close()
        await self.investigations.shutdown(timeout_s=timeout_s)


def web_client(secrets: SlackSecrets) -> AsyncWebClient:
    """The Web API client: 429s wait for `Retry-After`, 5xx and connection errors are retried."""
    handlers = [
        AsyncRateLimitErrorRetryHandler(max_retry_count=5),
        AsyncServerErrorRetryHandler(max_retry_count=2),
        AsyncConnectionErrorRetryHandler(max_retry_count=2),
    ]
    options: dict[str, Any] = {"base_url": secrets.api_url} if secrets.api_url else {}
    return AsyncWebClient(token=secrets.bot_token, retry_handlers=handlers, **options)


async def create_app(
    settings: SlackSettings,
    secrets: SlackSecrets,
    agent_factory: AgentFactory,
    *,
    store: RunStore,
    lease_ttl_s: float = LEASE_TTL_S,
    observers: Sequence[RunObserver] = (),
    access: AccessSettings | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    trace_link: TraceLink | None = None,
) -> SlackServices:
    """Build the app and its services; `auth.test` tells which workspace may approve and start runs.

    `store` keeps runs, approvals, de-dup keys, side effects and the audit log (migrated already);
    `access`: the `[access]` settings (default: their defaults); `clock` is what its limits count time by.
    """
    client = web_client(secrets)
    auth = await client.auth_test()
    outbox = Outbox(client, interval_s=settings.post_interval_s)
    policy = ApproverPolicy(
        users=set(settings.approvers),
        groups=set(settings.approver_groups),
        team_id=auth["team_id"],
        allow_self_approval=settings.allow_self_approval,
        ttl_s=settings.approval_ttl_s,
    )
    broker = ApprovalBroker(
        policy=policy,
        ui=SlackApprovalUI(outbox),
        directory=SlackDirectory(client),
        store=store,
        announce=lambda approval_id: store.notify(APPROVALS_TOPIC, approval_id),
        audit=AuditTrail(store),
    )
    investigations = InvestigationService(
        agent_factory=agent_factory,
        client=client,
        outbox=outbox,
        broker=broker,
        access=AccessPolicy(access or AccessSettings(), installing_team=auth["team_id"], clock=clock),
        store=store,
        replica=replica_id(),
        lease_ttl_s=lease_ttl_s,
        observers=observers,
        trace_link=trace_link,
    )
    app = AsyncApp(
        client=client,
        signing_secret=secrets.signing_secret,
        request_verification_enabled=secrets.signing_secret is not None,
    )
    duties = ReplicaDuties(store=store, service=investigations, broker=broker)
    services = SlackServices(app, client, outbox, broker, investigations, duties, store)
    register_listeners(services)
    return services


def register_listeners(services: SlackServices) -> None:
    """Every listener of the app, in one place; each acks at once and delegates."""
    app = services.app

    @app.event("app_mention")
    async def on_mention(body: dict[str, Any], event: dict[str, Any]) -> None:
        await services.investigations.on_mention(event_id=body.get("event_id", ""), event=event)

    @app.action(APPROVE)
    async def on_approve(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        await _decide(services, body, respond, approve=True)

    @app.action(DENY)
    async def on_deny(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        await _decide(services, body, respond, approve=False)

    @app.action(STOP)
    async def on_stop(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        said = await services.investigations.stop(body["actions"][0]["value"], body["user"]["id"])
        await _ephemeral(respond, said)


async def _decide(services: SlackServices, body: dict[str, Any], respond: Any, *, approve: bool) -> None:
    action = body["actions"][0]
    outcome = await services.broker.decide(
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
