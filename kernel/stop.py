"""Why a run stopped: a closed set, so every consumer can match on it exhaustively; and a stop as a value.

Only `FINISH` means success; every other member comes with `ok=False` and the partial trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class StopReason(StrEnum):
    """The closed set of reasons a run ends (or pauses)."""

    FINISH = "finish"
    """The model called `finish` with an answer."""
    MAX_STEPS = "max_steps"
    """The step budget was spent."""
    TOKEN_BUDGET = "token_budget"
    """The cumulative prompt-token budget was spent."""
    DEADLINE = "deadline"
    """The run's wall-clock deadline passed."""
    COST_BUDGET = "cost_budget"
    """The USD cost budget was spent."""
    UNPARSABLE_EXHAUSTED = "unparsable_exhausted"
    """The model kept answering without a usable action."""
    TOOL_ERROR_EXHAUSTED = "tool_error_exhausted"
    """Tool calls kept failing: the same failure again and again, or too many in a row."""
    LOOP_DETECTED = "loop_detected"
    """The model kept repeating a call that had already been answered."""
    LLM_ERROR = "llm_error"
    """The model endpoint failed after its retries."""
    CANCELLED = "cancelled"
    """Someone stopped the run."""
    INTERNAL_ERROR = "internal_error"
    """OpsAgent itself failed (a bug, or a store refusing a write), not the model, a tool or a person: the run ended
    for good, with its trace up to the failing step. The kernel never picks it; whoever carries the run does."""
    AWAITING_APPROVAL = "awaiting_approval"
    """The run paused: a side effect waits for a human decision; resume it with the decision."""
    INTERRUPTED = "interrupted"
    """The trace is a checkpoint of a run that had not ended (in flight, or its process stopped); resume it."""


@dataclass(frozen=True, slots=True)
class Stop:
    """A stop as the loop's helpers return it, instead of setting it on the run: the loop records it, in one place.

    `detail` is the account the run's `detail` takes; None when the stop has none of its own (a spent budget, a
    pause for approval, a finish), and the run's detail stands.
    """

    reason: StopReason
    detail: str | None = None

    def overrides(self, standing: StopReason | None) -> bool:
        """Whether this stop replaces the run's standing one: the first stop holds, but a cancel ends whatever stood
        (someone stopped the run while a call of a turn that had already paused or failed was running)."""
        return standing is None or self.reason is StopReason.CANCELLED
