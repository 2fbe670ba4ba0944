"""The `[knowledge]` section's memory keys: whether finished investigations are remembered, and for how long.

Plain data, read by the bot (which keeps the memory in its run store) and by `opsagent memory`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MEMORY_DAYS = 180


class MemorySettings(BaseModel):
    """`memory`, `memory_days`: the memory of past incidents that `similar_incidents` searches."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory: bool = True
    """Remember every finished investigation in the run store and offer `similar_incidents`; false: neither."""
    memory_days: int = Field(default=DEFAULT_MEMORY_DAYS, ge=1)
    """How long an incident is remembered: older ones are deleted from the memory (the run and its audit log stay)."""
