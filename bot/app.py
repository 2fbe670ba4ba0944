"""The Slack app factory: the Bolt `AsyncApp` wired to the services, with every listener registered.

HTTP mode serves `POST /slack/events` (signature-verified by Bolt); Socket Mode needs no public URL.
The listeners themselves live in `bot.listeners`; the services they hand work to are built here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.access.identity import Approvers, Identities
from bot.access.policy import AccessPolicy
from bot.access.settings import AccessSettings
from bot.approvals.broker import ApprovalBroker, ApproverPolicy
from bot.audit.trail import AuditTrail
from bot.drafts.service import DraftService
from bot.gate.gate import Gate
from bot.listeners import Listener, register_listeners
from bot.listeners.door import SlackDoor
from bot.listeners.router import Router
from bot.runs.active import RunObserver
from bot.runs.feedback import FeedbackService
from bot.runs.memory import RunMemory
from bot.runs.replica import ReplicaDuties, replica_id
from bot.runs.saved import same_call_in_thread
from bot.runs.service import AgentFactory, InvestigationService, TraceLink
from bot.runs.topics import APPROVALS_TOPIC
from bot.slack.approval_ui import SlackApprovalUI, SlackDirectory
from bot.slack.checks import CheckMessages
from bot.slack.client import web_client
from bot.slack.events_endpoint import SlackEventsEndpoint
from bot.slack.outbox import Outbox
from bot.slack.settings import SlackSecrets, SlackSettings
from bot.slack.updates import MessageUpdates
from bot.store.protocol import RunStore
from bot.store.settings import LEASE_TTL_S
from bot.verification.service import ActionChecks
from bot.verification.settings import VerificationSettings
from bot.verification.symptoms import SymptomChecker
from kernel import DEFAULT_REDACTOR, LLM
from opsagent_tools.runbooks import RunbookLibrary


class Door(Protocol):
    """A way in beside Slack's that holds tasks of its own (the API's streams and MCP server): started with the
    services, closed before them."""

    async def start(self) -> None:
        """Start its tasks, before requests arrive."""
        ...

    async def close(self) -> None:
        """Stop taking requests and end its tasks."""
        ...


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
    events: SlackEventsEndpoint
    """`POST /slack/events` (HTTP mode): signature first, then Bolt."""
    gate: Gate
    """Admits or refuses every request, from every way in (the alert receiver's too)."""
    drafts: DraftService
    """The postmortem and status drafts asked for in threads."""
    checks: ActionChecks
    """The checks of approved actions: scheduled as they succeed, run by this replica's duty once due."""
    routes: list[web.RouteDef] = field(default_factory=list)
    """HTTP routes besides `/slack/events` and `/healthz` that components add (served in both modes)."""
    body_limits: dict[str, int] = field(default_factory=dict)
    """Request body limits of routes that take more than the server's default (`/alertmanager`), by path."""
    memory: RunMemory | None = None
    """The memory of past incidents, when `[knowledge] memory` is on."""
    listeners: list[Listener] = field(default_factory=list)
    """Every Bolt listener registered, each of which goes through the gate."""
    workspace_url: str = ""
    """The workspace's address (auth.test's `url`): what threads' permalinks are built on; "" when unknown."""
    doors: list[Door] = field(default_factory=list)
    """Ways in that hold tasks of their own (the API), started and closed with the services."""
    _checking: asyncio.Task[None] | None = field(default=None, init=False, repr=False)

    async def start(self) -> None:
        """Remember the finished runs not remembered yet, resume the saved runs nobody carries, and start the
        replica's background duties (the checks of approved actions among them)."""
        if self.memory is not None:
            await self.memory.backfill()
        await self.duties.start()
        for door in self.doors:
            await door.start()
        self._checking = asyncio.create_task(self.checks.run(), name="action-checks")

    async def close(self, *, timeout_s: float) -> None:
        """Stop the ways in that hold tasks of their own and the duties (no more take-overs, no more checks: another
        replica, or the next start, makes them), let the drafts in progress finish, then stop taking work and save
        and announce the runs in flight."""
        for door in self.doors:
            await door.close()
        if self._checking is not None:
            self._checking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._checking
        await self.duties.close()
        await self.drafts.close(timeout_s=timeout_s)
        await self.investigations.shutdown(timeout_s=timeout_s)


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
    runbooks: RunbookLibrary | None = None,
    memory: RunMemory | None = None,
    drafter: LLM | None = None,
    quiet_approvals: str = "",
    verification: VerificationSettings | None = None,
    symptoms: SymptomChecker | None = None,
) -> SlackServices:
    """Build the app and its services; `auth.test` tells which workspace may approve and start runs.

    `store` keeps runs, approvals, de-dup keys, side effects and the audit log (migrated already): each service
    gets the ports it uses;
    `access`: the `[access]` settings (default: their defaults); `clock` is what its limits count time by;
    `runbooks`: the library whose runbooks are named to the model at the start of each run; `memory`: the memory
    of past incidents, which remembers each run as it finishes and links the threads of this workspace; `drafter`:
    the model that writes the narrative of postmortem and status drafts (None: the drafts hold the facts only);
    `quiet_approvals`: the channel where the approvals of runs posted in no channel (API runs without one) go, ""
    to deny their side effects.
    `verification`: the `[verification]` settings (default: their defaults); `symptoms`: what reads a symptom again
    to check an approved action (the metrics family; None: every check says there is no metric to re-check).
    """
    client = web_client(secrets)
    auth = await client.auth_test()
    outbox = Outbox(client, interval_s=settings.post_interval_s, batch_s=settings.step_batch_s)
    updates = MessageUpdates(outbox)
    workspace_url = str(auth.get("url") or "")
    if memory is not None:
        memory.link_threads(workspace_url)
    access = access or AccessSettings()
    approvers = Approvers(frozenset(settings.approvers), frozenset(settings.approver_groups))
    identities = Identities(
        SlackDirectory(client),
        installing_team=auth["team_id"],
        allowed_workspaces=access.allowed_workspaces,
        approvers=approvers,
        allow_guests=access.allow_guests,
    )
    audit = AuditTrail(store.audit, names=identities.name_of)  # people kept by name as they act, for the viewer
    drafts = DraftService(
        runs=store.runs,
        audit=store.audit,
        side_effects=store.side_effects,
        feedback=store.feedback,
        outbox=outbox,
        client=client,
        llm=drafter,
        workspace_url=workspace_url,
    )
    limits = AccessPolicy(access, clock=clock)
    gate = Gate(identities=identities, access=limits, ratings=store.feedback, audit=audit)
    policy = ApproverPolicy(
        approvers=approvers, allow_self_approval=settings.allow_self_approval, ttl_s=settings.approval_ttl_s
    )
    broker = ApprovalBroker(
        policy=policy,
        ui=SlackApprovalUI(
            outbox, updates, approvers=approvers, same_call=lambda approval: same_call_in_thread(store.runs, approval)
        ),
        store=store.approvals,
        announce=lambda approval_id: store.topics.notify(APPROVALS_TOPIC, approval_id),
        audit=audit,
    )
    replica = replica_id()
    checks = ActionChecks(
        settings=verification or VerificationSettings(),
        schedule=store.checks,
        runs=store.runs,
        checker=symptoms,
        audit=audit,
        messages=CheckMessages(outbox=outbox, updates=updates, trace_link=trace_link),
        replica=replica,
        lease_ttl_s=lease_ttl_s,
    )
    investigations = InvestigationService(
        agent_factory=agent_factory,
        client=client,
        outbox=outbox,
        updates=updates,
        broker=broker,
        gate=gate,
        runs=store.runs,
        leases=store.leases,
        topics=store.topics,
        guidance=store.guidance,
        dedupe=store.dedupe,
        audit=audit,
        replica=replica,
        lease_ttl_s=lease_ttl_s,
        observers=(limits, *observers),
        trace_link=trace_link,
        runbooks=runbooks,
        memory=memory,
        broadcast_verdict=settings.broadcast_verdict,
        workspace_url=workspace_url,
        quiet_approvals=quiet_approvals,
        action_ran=checks.action_ran,
    )
    app = AsyncApp(
        client=client,
        signing_secret=secrets.signing_secret,
        request_verification_enabled=secrets.signing_secret is not None,
    )
    duties = ReplicaDuties(
        runs=store.runs, leases=store.leases, topics=store.topics, service=investigations, broker=broker
    )
    events = SlackEventsEndpoint(app, secrets.signing_secret)
    services = SlackServices(
        app,
        client,
        outbox,
        broker,
        investigations,
        duties,
        store,
        events,
        gate,
        drafts,
        checks,
        memory=memory,
        workspace_url=workspace_url,
    )
    feedback = FeedbackService(store=store.feedback, client=client, audit=audit)
    router = Router(
        gate=gate, investigations=investigations, drafts=drafts, broker=broker, feedback=feedback, outbox=outbox
    )
    door = SlackDoor(runs=store.runs, dedupe=store.dedupe, redactor=DEFAULT_REDACTOR)
    services.listeners = register_listeners(app, door=door, router=router)
    return services
