"""`[access]` settings: who may start investigations, how many at once, how often, and the daily spend cap.

Plain data, so reading the configuration loads no service.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AccessSettings(BaseModel):
    """`[access]`: who may start investigations and how many; every limit applies to starting runs only."""

    model_config = ConfigDict(extra="forbid")

    allowed_workspaces: list[str] = Field(default_factory=list)
    """Workspace (T…) or org (E…) ids whose members may start runs, besides the installing workspace, which
    always may. Empty: only the installing one, so Slack Connect guests from other companies are refused."""
    allowed_channels: list[str] = Field(default_factory=list)
    """Channel ids where runs may start (alert-started ones too). Empty: any channel the bot was invited to."""
    runs_per_user_per_hour: int | None = Field(default=12, ge=1)
    """Runs one person may start in any hour. A run may last `budget.max_seconds` (300 s), so 12 lets a person
    investigate back to back all hour; more is a script or a loop. None (from code): no limit. Alert-started runs skip it."""
    runs_per_channel_per_hour: int | None = Field(default=36, ge=1)
    """Runs one channel may start in any hour: three people investigating back to back, or an alert storm
    throttled. None (from code): no limit."""
    max_concurrent_runs: int = Field(default=10, ge=1)
    """Runs in flight at once in this process; each holds a model conversation and backend queries."""
    daily_spend_usd: float | None = Field(default=None, gt=0)
    """Model spend (USD) of all runs per UTC day, finished and in flight, after which new runs are refused
    until midnight UTC. Needs the model's price in `[llm.prices]`. None: no cap."""
