"""`[store]` settings: where runs, approvals, de-dup keys, side effects and the audit log are kept.

Plain data, so reading the configuration opens no database and loads no driver.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

LEASE_TTL_S = 30.0
"""How long a replica holds a run without a heartbeat: a dead replica's runs resume elsewhere after this."""


class StoreSettings(BaseModel):
    """`[store]`: where runs, approvals, de-dup keys, side effects and the audit log are kept."""

    model_config = ConfigDict(extra="forbid")

    url: str = "sqlite:///opsagent-runs.db"
    """`sqlite:///relative.db`, `sqlite:////absolute.db` (one process), or `postgresql://…` (several replicas);
    set it with OPSAGENT_STORE__URL to keep a database password out of the file."""
    lease_ttl_s: float = Field(default=LEASE_TTL_S, ge=3)
