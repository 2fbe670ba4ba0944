"""Plain-English words for what a run did, shared by every surface people read: Slack, the viewer, the terminal.

Kept apart from Block Kit and HTML so each surface words the same facts the same way, and none imports another.
"""

from __future__ import annotations

from typing import assert_never

from kernel import StopReason


def stop_reason_words(reason: StopReason, *, steps: int | None = None) -> str:
    """Why a run stopped, in words for a channel; `steps` is the step count, named for `MAX_STEPS`."""
    match reason:
        case StopReason.FINISH:
            return "the agent finished with an answer"
        case StopReason.MAX_STEPS:
            return f"the step budget ({steps}) ran out" if steps else "the step budget ran out"
        case StopReason.TOKEN_BUDGET:
            return "the prompt-token budget ran out"
        case StopReason.DEADLINE:
            return "the deadline passed"
        case StopReason.COST_BUDGET:
            return "the cost budget ran out"
        case StopReason.UNPARSABLE_EXHAUSTED:
            return "the model kept replying without a usable action"
        case StopReason.TOOL_ERROR_EXHAUSTED:
            return "tool calls kept failing"
        case StopReason.LOOP_DETECTED:
            return "it kept repeating the same call"
        case StopReason.LLM_ERROR:
            return "the model endpoint failed"
        case StopReason.CANCELLED:
            return "stopped by a user"
        case StopReason.INTERNAL_ERROR:
            return "OpsAgent itself failed (not the model, a tool or a person)"
        case StopReason.AWAITING_APPROVAL:
            return "waiting for an approval"
        case StopReason.INTERRUPTED:
            return "interrupted before it ended; it resumes from its last step"
        case _:
            assert_never(reason)


def duration(ms: float) -> str:
    """A duration for people: "412 ms", "1.5 s", "2 min 5 s", "3 h 12 min"."""
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    if minutes >= 60:
        return f"{minutes // 60} h {minutes % 60} min"
    return f"{minutes} min {seconds} s"


def parallel_group(together: tuple[int, ...]) -> str:
    """The steps of one turn that run at once, for people: `3 reads in parallel: steps 1, 2, 3`."""
    return f"{len(together)} reads in parallel: steps {', '.join(map(str, together))}"
