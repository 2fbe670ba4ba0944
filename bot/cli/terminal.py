"""The terminal view of a run: the same typed event stream Slack consumes, rendered as text.

Rendering is a pure function of one event, so it is easy to test and to reuse.
"""

from __future__ import annotations

import textwrap
from typing import assert_never

from kernel import FINISH_TOOL, Event, RunFinished, RunResult, RunStarted, Step, StepCompleted, StepStarted

EXCERPT_CHARS = 1500
"""How much of an observation the terminal shows; the trace keeps all of it."""


def render_event(event: Event) -> str:
    """One event as terminal text (several lines for a completed step); empty for the finish step,
    whose answer the end of the run shows."""
    match event:
        case StepStarted(call=call) | StepCompleted(step=Step(call=call, error=None)) if (
            call and call.name == FINISH_TOOL
        ):
            return ""
        case RunStarted(run_id=run_id, task=task, resumed=resumed):
            verb = "resumed" if resumed else "started"
            return f"▶ run {run_id} {verb}: {task}"
        case StepStarted(index=index, call=call):
            return f"… step {index}: {call.render()}"
        case StepCompleted(step=step):
            status = f"✗ {step.error}" if step.error else "✓"
            head = f"{status} step {step.index} ({step.ms:.0f} ms)"
            approval = f"\n  approval: {step.approval.decision} by {step.approval.by or '-'}" if step.approval else ""
            thought = f"\n  thought: {_inline(step.thought)}" if step.thought else ""
            observation = step.observation
            if len(observation) > EXCERPT_CHARS:
                observation = (
                    observation[:EXCERPT_CHARS] + f"… [{len(observation) - EXCERPT_CHARS} more characters in the trace]"
                )
            return f"{head}{thought}{approval}\n  observation: {_inline(observation)}"
        case RunFinished(result=result):
            return render_result(result)
        case _:
            assert_never(event)


def render_result(result: RunResult) -> str:
    """The end of a run: the answer, or an explicit failure with its reason and best answer so far."""
    usage = result.usage
    footer = (
        f"{usage.steps} steps · {usage.prompt_tokens} prompt tokens · ${usage.cost_usd:.4f} · "
        f"{usage.elapsed_s:.1f} s · stop: {result.stop_reason}"
    )
    if result.ok:
        return f"■ finished\n{_block(result.answer or '', 2)}\n{footer}"
    lines = [f"■ FAILED: {result.stop_reason}" + (f" ({result.detail})" if result.detail else "")]
    if result.partial_answer:
        lines.append(f"  Not a final answer. What the agent knew when it stopped:\n{_block(result.partial_answer, 4)}")
    lines.append(footer)
    return "\n".join(lines)


def _inline(text: str) -> str:
    """Text that follows a label: later lines indented under it."""
    return "\n    ".join(text.strip().splitlines())


def _block(text: str, by: int) -> str:
    return textwrap.indent(text.strip(), " " * by)
