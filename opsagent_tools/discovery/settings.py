"""The `[tools.discover]` section: how long `discover` keeps an answer, how many it keeps, and how far back the
sources look. The section is optional: `discover` is offered whenever a configured family has something to list."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class DiscoverySettings(BaseModel):
    """`[tools.discover]`: how long answers are kept, how many, and how far back sources look."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ttl_s: float = Field(default=300.0, ge=0)
    """Seconds an answer is reused before the source is asked again."""
    max_entries: int = Field(default=256, ge=1)
    """Answers kept; the least recently used go first."""
    lookback_s: float = Field(default=6 * 3600.0, gt=0)
    """Series and streams seen in this much time before now are listed."""
