"""Run budgets and the usage counted against them, checked at one place before each model turn.

Every limit names its stop reason; the defaults are chosen for an incident investigation.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass

from kernel.stop import StopReason


class Pricing(BaseModel):
    """USD per million tokens for one model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The USD cost of one call."""
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1_000_000


PriceTable = Mapping[str, Pricing]
"""Prices by model name, as the endpoint reports or the adapter is configured with."""


class Budget(BaseModel):
    """Hard limits for one run. Exceeding any ends the run with `ok=False` and its stop reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int = Field(default=20, ge=1)
    """Tool calls (each call of a multi-call turn is a step). 20 covers a thorough investigation."""
    max_prompt_tokens: int = Field(default=300_000, ge=1)
    """Cumulative prompt tokens over all model calls: the real usage when reported, else estimated."""
    max_seconds: float = Field(default=300.0, gt=0)
    """Wall-clock deadline; it also caps every model call and tool call at the time left.
    Time spent waiting for a human approval is not counted."""
    max_cost_usd: float | None = Field(default=None, gt=0)
    """Optional spend cap; needs the model in the agent's price table."""
    max_consecutive_errors: int = Field(default=8, ge=1)
    """Failed steps in a row, whatever they are. A safety net: stuck loops are caught sooner below."""
    max_identical_errors: int = Field(default=3, ge=2)
    """The same deterministic failure (same call, same kind) this often in a row means the model
    is stuck: it will get the same answer again."""
    max_identical_transient_errors: int = Field(default=5, ge=2)
    """The same call failing with a timeout or exception this often in a row: retrying a flaky
    backend is legitimate, so this allows more tries before calling it stuck."""

    def check_before_turn(self, usage: Usage, seconds_left: float) -> StopReason | None:
        """The limit that forbids another model turn, if any (checked once, before each turn)."""
        if seconds_left <= 0:
            return StopReason.DEADLINE
        if usage.steps >= self.max_steps:
            return StopReason.MAX_STEPS
        if usage.prompt_tokens >= self.max_prompt_tokens:
            return StopReason.TOKEN_BUDGET
        if self.max_cost_usd is not None and usage.cost_usd >= self.max_cost_usd:
            return StopReason.COST_BUDGET
        return None


@dataclass
class Usage:
    """What a run has spent so far; carried in the trace so a resumed run keeps counting.

    A pydantic dataclass: validated when a trace is loaded, plain attribute updates on the hot path.
    """

    steps: int = 0
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_turns: int = 0
    """Model turns whose token counts are estimates because the endpoint reported none."""
    cost_usd: float = 0.0
    elapsed_s: float = 0.0
    """Wall-clock seconds spent running, excluding waits for human approval."""

    def add_turn(self, prompt_tokens: int, completion_tokens: int, *, estimated: bool, price: Pricing | None) -> None:
        """Count one model call."""
        self.turns += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.estimated_turns += int(estimated)
        if price is not None:
            self.cost_usd += price.cost(prompt_tokens, completion_tokens)
