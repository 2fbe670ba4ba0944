"""One replica's background duties on the shared run store: leases, take-overs, and relayed clicks.

It renews the leases of the runs it carries (a heartbeat), resumes saved runs nobody holds (after a
restart, or when another replica died), and wakes its runs when a decision or a Stop lands elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
from collections.abc import Awaitable, Callable

import structlog

from bot.approvals.broker import ApprovalBroker
from bot.runs.service import InvestigationService
from bot.runs.topics import APPROVALS_TOPIC, GUIDANCE_TOPIC, STOPS_TOPIC
from bot.store.ports import Leases, RunLookup, Topics

log = structlog.get_logger("opsagent.replica")

HEARTBEATS_PER_LEASE = 3
"""Leases are renewed this many times per lease period, so one late heartbeat does not lose a run."""


def replica_id() -> str:
    """A name for this process among the replicas: host, pid and a random part (pids repeat in containers)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


class ReplicaDuties:
    """The background tasks of one replica; `start` once the service is up, `close` on shutdown."""

    def __init__(
        self, *, runs: RunLookup, leases: Leases, topics: Topics, service: InvestigationService, broker: ApprovalBroker
    ) -> None:
        self._runs, self._leases, self._topics = runs, leases, topics
        self._service = service
        self._broker = broker
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Resume what this replica can at once, then keep the duties running."""
        await self.recover()
        ttl = self._service.supervisor.lease_ttl_s
        self._tasks = [
            asyncio.create_task(self._every(ttl / HEARTBEATS_PER_LEASE, self.heartbeat), name="lease-heartbeat"),
            asyncio.create_task(self._every(ttl / 2, self.recover), name="run-recovery"),
            asyncio.create_task(self._relay(APPROVALS_TOPIC, self._broker.wake), name="approval-relay"),
            asyncio.create_task(self._relay(STOPS_TOPIC, self._stop), name="stop-relay"),
            asyncio.create_task(self._relay(GUIDANCE_TOPIC, self._service.guidance.deliver), name="guidance-relay"),
        ]

    async def close(self) -> None:
        """Stop the duties (the runs themselves are shut down by the service)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def heartbeat(self) -> None:
        """Renew this replica's leases; give up the ones it holds but no longer carries (a release that failed
        while the store was down), so another replica resumes those runs; drop the runs another has taken."""
        ours = set(
            await self._leases.renew_leases(self._service.supervisor.replica, self._service.supervisor.lease_ttl_s)
        )
        active = self._service.active
        for run_id in ours - active.keys():
            log.warning("lease_released_uncarried", run_id=run_id)
            await self._leases.release_lease(run_id, self._service.supervisor.replica)
        for run_id, run in active.items():
            if run.task is not None and not run.task.done() and run_id not in ours:
                saved = await self._runs.get_run(run_id)
                if saved is not None and saved.owner not in ("", self._service.supervisor.replica):
                    log.warning("lease_lost", run_id=run_id, owner=saved.owner)
                    self._service.supervisor.abandon(run_id)

    async def recover(self) -> None:
        """Resume the saved runs nobody is carrying (their replica stopped or died), as many as there is room for."""
        for record in await self._leases.claimable_runs():
            if not self._service.supervisor.has_room:  # the rest wait for a replica with room (or this one, later)
                return
            if record.run_id in self._service.active:
                continue
            if await self._leases.acquire_lease(
                record.run_id, self._service.supervisor.replica, self._service.supervisor.lease_ttl_s
            ):
                log.info(
                    "run_resumed",
                    run_id=record.run_id,
                    status=str(record.status),
                    replica=self._service.supervisor.replica,
                )
                self._service.resume(record)

    async def _stop(self, payload: str) -> None:
        message = json.loads(payload)
        self._service.supervisor.cancel(str(message["run_id"]), by=str(message["by"]))

    async def _every(self, period_s: float, duty: Callable[[], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(period_s)
            try:
                await duty()
            except Exception as exc:  # the store may be restarting: try again next period
                log.warning("replica_duty_failed", duty=duty.__name__, error=repr(exc)[:300])

    async def _relay(self, topic: str, handle: Callable[[str], Awaitable[None]]) -> None:
        """Hand each message on `topic` to `handle`; the subscription reconnects by itself."""
        async with self._topics.listen(topic) as messages:
            async for payload in messages:
                try:
                    await handle(payload)
                except Exception as exc:
                    log.warning("relay_failed", topic=topic, error=repr(exc)[:300])
