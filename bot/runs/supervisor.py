"""The runs this process carries: each in a task of its own, launched, interrupted, released and shut down here.

The investigation service decides what a run does (start, resume, stop, end for good); the supervisor only keeps
the tasks and their leases: which runs are in flight, whether there is room for one more, and letting go of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import structlog

from bot.runs.active import ActiveRun
from bot.store.ports import Leases
from bot.store.protocol import StoreUnavailableError
from bot.store.records import RunRecord
from kernel import RunControl

log = structlog.get_logger("opsagent.investigations")

Carry = Callable[[ActiveRun], Coroutine[Any, Any, None]]
"""What a launched run's task does with it, to its end."""


class RunSupervisor:
    """Keeps this process's runs in flight, never more than `max_runs` (the cap of all replicas together)."""

    def __init__(self, *, leases: Leases, replica: str, lease_ttl_s: float, max_runs: int) -> None:
        self._leases = leases
        self.replica = replica
        self.lease_ttl_s = lease_ttl_s
        self._max_runs = max_runs
        self._runs: dict[str, ActiveRun] = {}
        self.accepting = True
        """False once shutting down: no run starts or is taken over after that."""

    @property
    def active(self) -> dict[str, ActiveRun]:
        """Runs in flight in this process, by run id."""
        return dict(self._runs)

    @property
    def has_room(self) -> bool:
        """Whether this process may take over one more run: it never carries more than `[access]
        max_concurrent_runs`, the cap of all replicas together (new runs are capped by the store's slots)."""
        return self.accepting and len(self._runs) < self._max_runs

    def launch(self, record: RunRecord, carry: Carry) -> ActiveRun:
        """Carry `record`'s run in a task of its own; when it ends, however, it leaves and its lease is released."""
        run = ActiveRun(record.run_id, record.channel, record.thread_ts, record.requested_by, RunControl())
        self._runs[run.run_id] = run

        async def carried() -> None:
            try:
                await carry(run)
            finally:
                self._runs.pop(run.run_id, None)
                await self.release(run.run_id)

        run.task = asyncio.create_task(carried(), name=f"run-{run.run_id}")
        return run

    def cancel(self, run_id: str, *, by: str) -> None:
        """Cancel a run of this process for a Stop by `by` (here, or relayed from another replica); it ends
        `cancelled`."""
        run = self._runs.get(run_id)
        if run is not None:
            run.stop(by)

    def abandon(self, run_id: str) -> None:
        """Drop a run another replica has taken over (this one lost its lease): no word in the thread."""
        run = self._runs.get(run_id)
        if run is not None and run.task is not None:
            run.taken_over = True
            run.task.cancel()

    async def shutdown(self, *, timeout_s: float) -> None:
        """Stop taking work and interrupt the runs in flight (each saves itself and says so), within `timeout_s`."""
        self.accepting = False
        tasks = [run.task for run in self._runs.values() if run.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)

    async def release(self, run_id: str) -> None:
        """Give up this replica's lease on the run; a store that cannot is logged (the lease then runs out)."""
        try:
            await self._leases.release_lease(run_id, self.replica)
        except StoreUnavailableError as exc:  # the lease expires on its own; another replica then resumes the run
            log.warning("lease_release_failed", run_id=run_id, error=str(exc)[:200])
