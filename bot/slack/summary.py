"""The run's summary message, the first reply of its thread and kept current: while it runs, the status, the
leading hypothesis, what has been checked, what is next and a Stop button; at the end, the verdict.

The verdict is `bot.verdict`'s (the terminal and the viewer render the same one): summary, root cause, the gated
confidence and why it was lowered, the evidence linked to its steps and sources, what was ruled out, next steps,
every side effect it proposed with what came of it (who approved or denied it, whether it held), 👍/👎, and what
the run took; a side effect that did not happen is also a next step, by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from bot.slack.action_ids import STOP
from bot.slack.approval_blocks import action_line
from bot.slack.blocks import (
    Message,
    StepUrl,
    build_message,
    button,
    confirm_dialog,
    content_id,
    context_block,
    id_part,
    section_blocks,
    short_code,
    source_links,
    steps_ref,
)
from bot.slack.feedback import feedback_block
from bot.slack.mrkdwn import (
    clip,
    inline_code,
    inline_markdown,
    link,
    literal,
    markdown_to_mrkdwn,
    split_mrkdwn,
    user_ref,
)
from bot.slack.steps import step_text
from bot.verdict import CUT_SHORT, Claim, StepLine, StepStatus, Verdict, one_line, usage_facts
from bot.words import RUN_STOPPED_REASON
from kernel import Confidence, Hypothesis, StopReason, TakenGuidance

CHECKED_LINES = 8
"""Steps the live summary lists (the latest); earlier ones are counted."""
MAX_EVIDENCE, MAX_RULED_OUT, MAX_NEXT = 6, 4, 5
_FIELD_CHARS = 700
_REPLY_CHARS, _REPLY_CALLS = 300, 3
"""The last reply is one line: the root cause is cut to this, and a stopped run names its latest calls."""
_CHECKED = frozenset({StepStatus.OK, StepStatus.FAILED})
_PARTIAL_CHARS = 2500
GUIDANCE_LINES = 3
"""Guidance the summary shows (the latest); all of it is in the trace."""
_GUIDANCE_CHARS = 300


@dataclass(frozen=True, slots=True)
class Thinking:
    """The model is deciding what to do next."""


@dataclass(frozen=True, slots=True)
class Running:
    """These calls are running (in a few words each)."""

    calls: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AwaitingApproval:
    """A side effect waits for one of `approvers` (our mrkdwn mentions)."""

    step: int
    call: str
    approvers: str


@dataclass(frozen=True, slots=True)
class Restarting:
    """OpsAgent is stopping; the run is saved and continues after `steps` steps."""

    steps: int


Activity = Thinking | Running | AwaitingApproval | Restarting


@dataclass(frozen=True, slots=True)
class LiveRun:
    """What the summary shows while the run goes on."""

    run_id: str
    task: str
    requested_by: str
    steps: tuple[StepLine, ...]
    hypothesis: Hypothesis | None
    activity: Activity
    guidance: tuple[TakenGuidance, ...] = ()
    """What people told the run, as it took it."""


def live_summary(run: LiveRun) -> Message:
    """The summary while the run goes on: status, hypothesis, what was checked, what is next, and Stop."""
    lines = [f"🔎 *Investigating:* {literal(clip(' '.join(run.task.split()), 300))}"]
    lines += _known_lines(run.hypothesis, run.steps)
    lines += [_guidance_line(taken) for taken in run.guidance[-GUIDANCE_LINES:]]
    lines.append(f"*Next:* {_activity_words(run.activity)}")
    blocks = section_blocks("\n".join(lines))
    blocks.append(context_block(f"Run {short_code(run.run_id)} · requested by {user_ref(run.requested_by)}"))
    confirm = confirm_dialog(
        "Stop this investigation?",
        f"OpsAgent stops run {run.run_id} and voids its pending approvals.",
        "Stop",
        "Keep running",
    )
    stop = button("⏹ Stop", STOP, run.run_id, "danger", confirm)
    blocks.append({"type": "actions", "elements": [stop]})
    fallback = f"🔎 Investigating: {clip(' '.join(run.task.split()), 300)}"
    return build_message(fallback, blocks, content_id(f"summary.{id_part(run.run_id)}.live", blocks))


def final_summary(
    verdict: Verdict, *, step_url: StepUrl, trace_url: str | None = None, priced: bool = False
) -> Message:
    """The summary once the run ended: the verdict, 👍/👎, what the run took; no Stop button any more. Who stopped
    a cancelled run (`Verdict.stopped_by`) is shown as a real mention."""
    blocks = section_blocks(_verdict_text(verdict))
    blocks += _listed("Evidence", [_claim_text(c, step_url) for c in verdict.evidence], MAX_EVIDENCE)
    if verdict.rest:  # what a prose answer says besides: a paragraph, after its evidence
        blocks += section_blocks(_block(verdict.rest))
    blocks += _listed("Ruled out", [_claim_text(c, step_url) for c in verdict.ruled_out], MAX_RULED_OUT)
    by_hand = [action.by_hand(code=inline_code) for action in verdict.by_hand]  # ours: always shown
    blocks += _listed(
        "Next steps", [_inline(s) for s in verdict.next_steps[:MAX_NEXT]] + by_hand, MAX_NEXT + len(by_hand)
    )
    if verdict.guidance:
        said = [_guidance_line(taken) for taken in verdict.guidance[-GUIDANCE_LINES:]]
        blocks += section_blocks("\n".join(["*Guidance that shaped this run*", *said]))
    if verdict.actions:
        said = [action_line(action, step_url) for action in verdict.actions]
        blocks += section_blocks("\n".join(["*Actions*", *said]))
    if verdict.claimed_not_taken:
        claims = " ".join(literal(clip(c, 200)) for c in verdict.claimed_not_taken[:3])
        blocks += section_blocks(f"⚠️ *Claimed, not done:* {claims} No approved step took this action.")
    if verdict.ok:  # a run that gave no answer has none to rate
        blocks.append(feedback_block(verdict.run_id))
    facts = [*usage_facts(verdict, priced=priced), f"run {short_code(verdict.run_id)}"]
    if trace_url:
        facts.append(link(trace_url, "View trace"))
    blocks.append(context_block(" · ".join(facts)))
    said = verdict.summary if verdict.ok else verdict.detail if not verdict.stop.by else ""
    fallback = f"{_icon(verdict)} {verdict.title}" + (f": {said}" if said else "")
    return build_message(clip(fallback, 600), blocks, content_id(f"summary.{id_part(verdict.run_id)}.end", blocks))


def final_reply(verdict: Verdict, *, thread_url: str = "") -> str:
    """The run's last reply, which notifies the thread, in one line: the verdict's status, confidence and root cause;
    for a run that gave no answer, who or what stopped it and what was known (the steps checked, the leading
    hypothesis, the approvals the Stop voided). `thread_url`: the thread's permalink, for a reply the channel sees
    too (a broadcast); without one it points to the summary above."""
    if verdict.ok:
        level = f" · confidence *{literal(verdict.level)}*" if verdict.level else ""
        cause = verdict.root_cause or verdict.summary
        said = f"{_icon(verdict)} *{verdict.title}*{level}" + (f" — {_inline(cause, _REPLY_CHARS)}" if cause else "")
        where = "the verdict is at the top of this thread."
    else:
        said = f"{_icon(verdict)} *{_stop_text(verdict)}* {_known_words(verdict)}"
        where = "what each step found is at the top of this thread."
    return f"{said} · {link(thread_url, 'Open the thread') if thread_url else where}"


def _listed(title: str, items: list[str], shown: int, *, counted: bool = True) -> list[dict[str, Any]]:
    """A titled list of the verdict's, its first `shown` items (and how many more the trace has, when `counted`)."""
    if not items:
        return []
    more = [f"_… and {len(items) - shown} more in the trace_"] if counted and len(items) > shown else []
    return section_blocks("\n".join([f"*{title}*", *(f"• {item}" for item in items[:shown]), *more]))


def _known_words(verdict: Verdict) -> str:
    """What a run that gave no answer knew, in a few words: "after 3 steps · checked `a`, `b` · leading hypothesis:
    … · 1 pending approval voided: step 3 `c`"."""
    count = verdict.tool_steps
    parts = [f"after {count} step{'' if count == 1 else 's'}" if count else "before any step"]
    checked = [line.call for line in verdict.steps if line.tool and line.status in _CHECKED and not _cut(line)]
    if checked:
        shown = checked[-_REPLY_CALLS:]
        more = f" and {len(checked) - len(shown)} more" if len(checked) > len(shown) else ""
        parts.append(f"checked {', '.join(short_code(call, 60) for call in shown)}{more}")
    hypothesis = verdict.hypothesis
    level = f" (_{hypothesis.confidence.value}_)" if hypothesis is not None and hypothesis.confidence else ""
    parts.append(f"leading hypothesis: {_inline(hypothesis.text, 200)}{level}" if hypothesis else "no hypothesis yet")
    voided = _voided_by_stop(verdict) if verdict.stop.by else []
    if voided:
        parts.append(f"{len(voided)} pending approval{'' if len(voided) == 1 else 's'} voided: {', '.join(voided)}")
    return " · ".join(parts)


def _cut(line: StepLine) -> bool:
    """A call the Stop cut short: it checked nothing."""
    return line.status is StepStatus.FAILED and line.outcome == CUT_SHORT


def _voided_by_stop(verdict: Verdict) -> list[str]:
    """The side effects that waited for an approval when the run was stopped, as "step 5 `call`": the Stop voided
    them (a run ended where no replica carried it keeps them waiting in its trace)."""
    return [
        f"step {line.index} {short_code(line.call, 60)}"
        for line in verdict.steps
        if line.status is StepStatus.WAITING or (line.refusal is not None and line.refusal.reason == RUN_STOPPED_REASON)
    ]


def too_late_words(user: str, said: Sequence[str]) -> str:
    """The reply to a person whose guidance came after the run's last request (`said`: what they wrote)."""
    quoted = "; ".join(f"“{literal(clip(' '.join(text.split()), 200))}”" for text in said[-3:])
    return (
        f"{user_ref(user)}, this investigation had made its last request to the model when your guidance came, so it "
        f"did not shape the answer: {quoted}. Mention me again in this thread to start a follow-up with it."
    )


def _guidance_line(taken: TakenGuidance) -> str:
    """One guidance in the summary: who, what (their words, escaped), and the step it came before."""
    text = literal(clip(" ".join(taken.guidance.text.split()), _GUIDANCE_CHARS))
    return f"✍️ *Guidance from {literal(taken.guidance.by)}:* “{text}”, taken at step {taken.step}"


def _known_lines(hypothesis: Hypothesis | None, steps: Sequence[StepLine]) -> list[str]:
    """What is known so far, in the summary: the leading hypothesis and the latest steps checked."""
    lines = []
    if hypothesis is not None:
        level = f" · _{hypothesis.confidence.value}_" if hypothesis.confidence is not None else ""
        lines.append(f"*Leading hypothesis:* {literal(hypothesis.text)}{level}")
    if steps:
        shown = steps[-CHECKED_LINES:]
        earlier = len(steps) - len(shown)
        lines.append("*Checked:*" + (f" _({earlier} earlier steps in the thread)_" if earlier else ""))
        lines += [step_text(line) for line in shown]
    return lines


def _stop_text(verdict: Verdict) -> str:
    """The title of the run's end in mrkdwn (`Verdict.stop`): "Stopped by <@U…>" when someone stopped it."""
    return verdict.stop.said(person=user_ref, text=literal)


def _verdict_text(verdict: Verdict) -> str:
    if not verdict.ok:
        title = _stop_text(verdict)
        if verdict.detail and not verdict.stop.by:  # "stopped by U…" only repeats the title
            title += f" — {literal(clip(one_line(verdict.detail, 600), 600))}"
        lines = [f"{_icon(verdict)} *{title}*", *_known_lines(verdict.hypothesis, verdict.steps)]
        if verdict.partial_answer:
            lines += ["⚠️ *Not a final answer.* What the agent knew when it stopped:", _block(verdict.partial_answer)]
        return "\n".join(lines)
    level = f" · confidence *{literal(verdict.confidence_words)}*" if verdict.confidence_words else ""
    if verdict.derived and verdict.derived_because:  # the level in bold, how the gate derived it beside it
        level = f" · confidence *{literal(verdict.level)}* · _{literal(verdict.derived_because)}_"
    lines = [f"{_icon(verdict)} *{verdict.title}*{level}"]
    if verdict.summary:
        lines.append(f"*{_inline(verdict.summary)}*")
    if verdict.root_cause:
        lines.append(f"*Root cause:* {_inline(verdict.root_cause)}")
    return "\n".join(lines)


def _claim_text(claim: Claim, step_url: StepUrl) -> str:
    cited = steps_ref(claim.steps, step_url)
    if cited and claim.matched:  # it cites no step: code found it in these
        cited = f"found in {cited}"
    sources = source_links(claim.links)
    refs = " · ".join(part for part in (cited, sources) if part)
    if not claim.supported:
        return f"⚠️ _unsupported ({literal(claim.problem)}):_ {_inline(claim.text)}" + (f" · {cited}" if cited else "")
    return _inline(claim.text) + (f" · {refs}" if refs else "")


def _block(text: str) -> str:
    """Model Markdown of several lines as mrkdwn, cut (fences kept balanced) to what a summary has room for."""
    chunks = split_mrkdwn(markdown_to_mrkdwn(text[: _PARTIAL_CHARS * 2].strip()), _PARTIAL_CHARS)
    return (chunks[0] if chunks else "") + ("\n_… the rest is in the trace_" if len(chunks) > 1 else "")


def _inline(text: str, limit: int = _FIELD_CHARS) -> str:
    """Model text on one line as mrkdwn: its inline code, emphasis and links kept, everything else escaped."""
    return inline_markdown(one_line(text, limit))


def _activity_words(activity: Activity) -> str:
    match activity:
        case Thinking():
            return "🤔 deciding what to check next"
        case Running(calls=calls):
            what = f"{len(calls)} reads in parallel: " if len(calls) > 1 else ""
            more = f" · {len(calls) - 3} more" if len(calls) > 3 else ""
            return f"⏳ running {what}" + " · ".join(short_code(call, 120) for call in calls[:3]) + more
        case AwaitingApproval(step=step, call=call, approvers=approvers):
            return f"🔐 step {step} ({short_code(call, 120)}) waits for approval from {approvers}"
        case Restarting(steps=steps):
            where = f"after step {steps}" if steps else "from its start"
            return f"⏸ OpsAgent is restarting; this run is saved and continues {where}"
        case _:
            assert_never(activity)


def _icon(verdict: Verdict) -> str:
    if not verdict.ok:
        return {StopReason.AWAITING_APPROVAL: "⏸", StopReason.CANCELLED: "⏹"}.get(verdict.stop_reason, "❌")
    match verdict.confidence:
        case Confidence.CONFIRMED:
            return "✅"
        case Confidence.LIKELY:
            return "🟡"
        case Confidence.INCONCLUSIVE:
            return "❔"
        case None:
            return "💬"
        case _:
            assert_never(verdict.confidence)
