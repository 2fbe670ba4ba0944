"""`POST /alertmanager`: Alertmanager's webhook opens an investigation thread for each firing alert group.

The request is checked (bearer token, payload) and answered at once; the Slack work runs in a task, one
notification at a time in arrival order. A re-send of a known group is ignored unless new alerts joined it
(then the thread gets a note); a resolved group gets a note and its run, if still going, is stopped.
"""

from __future__ import annotations

import asyncio
import hmac
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import assert_never

import structlog
from aiohttp import web

from bot.access.askers import Service
from bot.access.identity import Approvers
from bot.access.refusals import AccessRefused
from bot.alerts.payload import ALERT_TASK, Alert, AlertGroup, AlertStatus, InvalidAlertPayload, alert_data, thread_facts
from bot.alerts.settings import TOKEN_ENV, AlertmanagerSettings, alertmanager_token
from bot.app import SlackServices
from bot.audit.trail import AuditKind, AuditTrail
from bot.gate.gate import Admitted, Gate
from bot.gate.requests import Investigate, Place, StopRun
from bot.runs.active import ActiveRun
from bot.runs.service import InvestigationService
from bot.slack.alert_blocks import alert_opened, alert_resolved, alerts_joined
from bot.slack.blocks import Message
from bot.slack.outbox import Outbox
from bot.slack.refusals import refusal_text
from bot.store.ports import AlertThreads, RunLookup
from bot.store.records import AlertThread, RunStatus
from kernel import DEFAULT_REDACTOR, Redactor

log = structlog.get_logger("opsagent.alerts")

PATH = "/alertmanager"
ACTOR = "alertmanager"
"""Who alert-started runs are requested and stopped by, in their threads and logs."""
MAX_PENDING = 1000
"""Notifications accepted but not yet handled; beyond it the receiver answers 503 and Alertmanager retries."""
ALERTMANAGER = Service(ACTOR)
"""Who asks for an alert's run, once its bearer token is checked at this door."""


def serve_alertmanager(
    settings: AlertmanagerSettings, services: SlackServices, environ: Mapping[str, str] = os.environ
) -> None:
    """Add the receiver's route, and its body limit, to the bot's HTTP server; a ValueError if the token is missing."""
    receiver = AlertReceiver(
        channel=settings.channel,
        token=alertmanager_token(environ),
        gate=services.gate,
        investigations=services.investigations,
        outbox=services.outbox,
        threads=services.store.alert_threads,
        runs=services.store.runs,
        audit=AuditTrail(services.store.audit),
    )
    services.routes += receiver.routes()
    services.body_limits[PATH] = settings.max_body_bytes


class AlertReceiver:
    """Turns Alertmanager notifications into investigation threads in one channel."""

    def __init__(
        self,
        *,
        channel: str,
        token: str,
        gate: Gate,
        investigations: InvestigationService,
        outbox: Outbox,
        threads: AlertThreads,
        runs: RunLookup,
        audit: AuditTrail | None = None,
        redactor: Redactor = DEFAULT_REDACTOR,
    ) -> None:
        self._channel = channel
        self._token = token.encode()
        self._gate = gate
        self._investigations = investigations
        self._runs = runs
        self._outbox = outbox
        self._threads = threads
        self._audit = audit
        """Records when a group's alerts started and ended, on its run: a postmortem's impact window."""
        self._redactor = redactor
        self._lock = asyncio.Lock()
        self._pending: set[asyncio.Task[None]] = set()

    def routes(self) -> list[web.RouteDef]:
        """`POST /alertmanager`."""
        return [web.post(PATH, self.handle)]

    async def handle(self, request: web.Request) -> web.Response:
        """Check the token and the payload, queue the notification, answer at once."""
        if not self._authorised(request.headers.get("Authorization", "")):
            log.warning("alertmanager_unauthorised", remote=request.remote)
            return _error(
                401,
                f"missing or wrong bearer token: send `Authorization: Bearer <{TOKEN_ENV}>` "
                "(Alertmanager: webhook_config.http_config.authorization.credentials_file)",
            )
        try:
            group = AlertGroup.parse(await request.read())
        except InvalidAlertPayload as exc:
            log.warning("alertmanager_bad_payload", error=str(exc)[:500])
            return _error(400, str(exc))
        if len(self._pending) >= MAX_PENDING:
            return _error(503, "too many alert notifications waiting; Alertmanager will retry")
        task = asyncio.create_task(self._handle_group(group.redacted(self._redactor)), name="alertmanager")
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return web.json_response({"ok": True, "group_key": group.group_key, "status": group.status.value})

    def _authorised(self, header: str) -> bool:
        scheme, _, credentials = header.strip().partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(credentials.strip().encode(), self._token)

    async def _handle_group(self, group: AlertGroup) -> None:
        async with self._lock:  # one at a time, in arrival order: a resolve never overtakes its firing
            structlog.contextvars.bind_contextvars(group_key=group.group_key, alert=group.name)
            try:
                match group.status:
                    case AlertStatus.FIRING:
                        await self._firing(group)
                    case AlertStatus.RESOLVED:
                        await self._resolved(group)
                    case _:
                        assert_never(group.status)
            except Exception:  # a bug of ours must not stop the next notifications
                log.exception("alert_notification_failed")

    async def _firing(self, group: AlertGroup) -> None:
        firing = group.firing
        known = await self._threads.alert_thread(group.group_key)
        if known is None:
            await self._open(group, firing)
            return
        joined = [alert for alert in firing if alert.fingerprint not in known.fingerprints]
        if not joined:
            log.info("alert_resend_ignored", thread_ts=known.thread_ts)
            return
        self._post(alerts_joined(thread_facts(group, joined)), known.thread_ts, known.channel)
        fingerprints = known.fingerprints | {alert.fingerprint for alert in joined}
        await self._threads.save_alert_thread(group.group_key, replace(known, fingerprints=fingerprints))
        log.info("alerts_joined", thread_ts=known.thread_ts, joined=len(joined))

    async def _open(self, group: AlertGroup, firing: list[Alert]) -> None:
        request = Investigate(
            ALERTMANAGER,
            Place(self._channel),
            ALERT_TASK,
            data=alert_data(group, firing),
            asked=f"{group.name} firing (Alertmanager)",
            labels=tuple(alert.labels for alert in firing),
        )
        admission = await self._gate.admit(request)  # before the thread: a refused run still shows its alert
        opening = alert_opened(thread_facts(group, firing))
        answer = await self._outbox.send("chat_postMessage", self._channel, **opening.as_kwargs())
        thread_ts = (answer or {}).get("ts")
        if not thread_ts:  # not remembered: Alertmanager's next re-send tries again
            log.warning("alert_thread_not_opened", channel=self._channel)
            if isinstance(admission, Admitted):
                self._gate.withdraw(admission)
            return
        run = None
        match admission:
            case AccessRefused():
                words = refusal_text(admission, now=self._gate.now(), approvers=Approvers())
                self._outbox.enqueue("chat_postMessage", self._channel, thread_ts=thread_ts, text=words)
            case Admitted():
                opened = replace(request, place=Place(self._channel, thread_ts))
                run = await self._investigations.start(replace(admission, request=opened))
            case _:
                assert_never(admission)
        fingerprints = frozenset(alert.fingerprint for alert in firing)
        thread = AlertThread(self._channel, thread_ts, fingerprints, run.run_id if isinstance(run, ActiveRun) else None)
        await self._threads.save_alert_thread(group.group_key, thread)
        if self._audit is not None and firing:
            starts = min(alert.starts_at for alert in firing).isoformat()
            await self._audit.record(
                AuditKind.ALERT_FIRED,
                run_id=thread.run_id or "",
                actor=ACTOR,
                alert=group.name,
                alerts=len(firing),
                starts_at=starts,
            )
        log.info("alert_thread_opened", thread_ts=thread_ts, run_id=thread.run_id, alerts=len(firing))

    async def _resolved(self, group: AlertGroup) -> None:
        known = await self._threads.alert_thread(group.group_key)
        if known is None:
            log.info("resolved_group_unknown")
            return
        resolved = alert_resolved(group.name, group.ended_at, offer_postmortem=known.run_id is not None)
        self._post(resolved, known.thread_ts, known.channel)
        if self._audit is not None and known.run_id is not None:
            ends = {"ends_at": group.ended_at.isoformat()} if group.ended_at is not None else {}
            await self._audit.record(
                AuditKind.ALERT_RESOLVED, run_id=known.run_id, actor=ACTOR, alert=group.name, **ends
            )
        run = await self._runs.get_run(known.run_id) if known.run_id is not None else None
        if run is not None and run.status is not RunStatus.FINISHED:  # wherever it runs; an ended one is left be
            stop = StopRun(ALERTMANAGER, Place(known.channel, known.thread_ts), run)
            admitted = await self._gate.admit(stop)
            if isinstance(admitted, Admitted):
                await self._investigations.stop_requested(admitted)
        await self._threads.forget_alert_thread(group.group_key)
        log.info("alert_resolved", thread_ts=known.thread_ts, run_id=known.run_id)

    def _post(self, message: Message, thread_ts: str, channel: str) -> None:
        self._outbox.enqueue("chat_postMessage", channel, thread_ts=thread_ts, **message.as_kwargs())


def _error(status: int, message: str) -> web.Response:
    headers = {"WWW-Authenticate": 'Bearer realm="opsagent"'} if status == 401 else None
    return web.json_response({"ok": False, "error": message}, status=status, headers=headers)
