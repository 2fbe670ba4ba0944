"""The run store's pub/sub topics between replicas: where approvals, Stops and guidance are announced.

A message is a wake-up call, not the truth: the receiver re-reads the store, so a lost message delays, never decides.
"""

from __future__ import annotations

APPROVALS_TOPIC = "opsagent_approvals"
"""Where a replica announces an approval it settled, for the replica whose run waits on it."""
STOPS_TOPIC = "opsagent_stops"
"""Where a Stop that lands on one replica is announced to the replica running the run."""
GUIDANCE_TOPIC = "opsagent_guidance"
"""Where a replica that kept guidance for a run announces it (the run id), for the replica carrying the run."""
PROGRESS_TOPIC = "opsagent_progress"
"""Where the replica carrying a run announces (the run id) that its checkpoint moved on: a step, a pause, its end.
What wakes the API's event streams and waits, on any replica."""
