"""A step in the thread as one scannable unit: its status, the call in a few words, the outcome (the tool's headline
or a short excerpt), its source links and its place in the trace viewer, then the thought in one grey line.

The full observation stays in the viewer and the trace file: no raw output in the channel.
"""

from __future__ import annotations

from typing import assert_never

from bot.slack.approval_words import refusal_line
from bot.slack.blocks import Message, StepUrl, build_message, context_block, section_blocks, source_links, step_ref
from bot.slack.mrkdwn import clip, inline_code, literal
from bot.verdict import StepLine, StepStatus
from bot.words import duration, parallel_group

SLOW_MS = 1000.0
"""A step at least this slow says how long it took (a slow backend is worth a glance); faster ones do not."""


def status_icon(status: StepStatus) -> str:
    """The mark a step carries in Slack."""
    match status:
        case StepStatus.OK:
            return "✓"
        case StepStatus.FAILED:
            return "✗"
        case StepStatus.WAITING:
            return "⏳"
        case StepStatus.DENIED:
            return "🚫"
        case StepStatus.PROSE:
            return "💬"
        case StepStatus.UNUSABLE:
            return "⚠️"
        case _:
            assert_never(status)


def step_text(line: StepLine) -> str:
    """The step's first line in mrkdwn: `✓ *3* `search_logs gateway 15m` — 217 × 503 from the gateway`."""
    head = f"{status_icon(line.status)} *{line.index}*"
    if not line.tool:
        return f"{head} _{literal(line.call)}_"
    said = refusal_line(line.refusal) if line.refusal is not None else literal(line.outcome)
    outcome = f" — {said}" if said else ""
    return f"{head} {inline_code(line.call)}{outcome}"


def step_message(line: StepLine, step_url: StepUrl, *, together: tuple[int, ...] = ()) -> Message:
    """One step as a reply: the step's line with its links, and the thought and duration in a context line.
    `together`: the group of reads this step opened, run at once with it (said once, on the group's first step)."""
    links = [part for part in (source_links(line.links), _viewer_link(line.index, step_url)) if part]
    first = step_text(line) + (f"  {' · '.join(links)}" if links else "")
    blocks = section_blocks(first)
    facts = [f"⇉ {parallel_group(together)}"] if together else []
    facts += [literal(line.thought)] if line.thought else []
    if line.tool and line.ms >= SLOW_MS:
        facts.append(f"⏱ {duration(line.ms)}")
    if facts:
        blocks.append(context_block(" · ".join(facts)))
    fallback = f"{status_icon(line.status)} {line.index} {line.call}" + (f" — {line.outcome}" if line.outcome else "")
    return build_message(clip(fallback, 300), blocks, f"step.{line.index}")


def _viewer_link(index: int, step_url: StepUrl) -> str:
    return step_ref(index, step_url, "step") if step_url(index) else ""
