"""Slack Block Kit messages for a run (header, steps, approvals, final answer), built by pure functions.

Every message keeps Slack's limits whatever the sizes, and escapes all untrusted text: no `invalid_blocks`, no pings.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, assert_never

from bot.slack.action_ids import APPROVE, DENY, STOP
from bot.slack.mrkdwn import (
    BACKTICK_STANDIN,
    clip,
    clip_literal,
    clip_mrkdwn,
    code_block,
    escape_mrkdwn,
    excerpt,
    inline_code,
    link,
    markdown_to_mrkdwn,
    more_marker,
    quoted,
    size,
    slack_date,
    split_mrkdwn,
    user_ref,
)
from bot.words import duration, stop_reason_words
from kernel import ApprovalRequest, RunResult, Step, StopReason, step_references

MAX_BLOCKS = 50
SECTION_CHARS = 3000
HEADER_CHARS = 150
CONTEXT_TEXT_CHARS = 2000
FALLBACK_CHARS = 4000
BUTTON_VALUE_CHARS = 2000
MESSAGE_CHARS = 12_000
"""Our own cap on the text of one message (Slack documents ~12k for `markdown` blocks): longer content is cut
with a marker, or for final answers split across messages."""

_CALL_CHARS = 2000
_THOUGHT_CHARS = 4000
_SAFE_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_MAX_EVIDENCE = 12
_CUT = "✂️ _The answer is too long for Slack and is cut here; the trace has all of it._"


@dataclass(frozen=True, slots=True)
class Message:
    """One Slack message: `text` is the notification fallback, `blocks` what readers see."""

    text: str
    blocks: list[dict[str, Any]]

    def as_kwargs(self) -> dict[str, Any]:
        """The arguments for `chat_postMessage` / `chat_update`."""
        return {"text": self.text, "blocks": self.blocks}


def run_header(run_id: str, task: str, requested_by: str | None, *, ended: StopReason | None = None) -> Message:
    """The first message of a run, with a Stop button; with `ended`, the same header without it (for chat.update)."""
    one_line = " ".join(task.split())
    header = clip(f"🔎 Investigating: {one_line}", HEADER_CHARS)
    blocks: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": header, "emoji": True}}]
    if header != f"🔎 Investigating: {one_line}":
        blocks += section_blocks(f"*Task:* {clip_literal(task.strip(), _THOUGHT_CHARS)}")
    line = f"Run {_short_code(run_id)} · requested by {user_ref(requested_by)}"
    if ended is not None:
        line += f" · ended: {stop_reason_words(ended)}"
    blocks.append(context_block(line))
    if ended is None:
        _check_value(run_id, "run_id")
        confirm = _confirm(
            "Stop this investigation?",
            f"OpsAgent stops run {run_id} and voids its pending approvals.",
            "Stop",
            "Keep running",
        )
        stop = _button("⏹ Stop", STOP, run_id, "danger", confirm)
        blocks.append({"type": "actions", "block_id": f"run.{_id_part(run_id)}.stop", "elements": [stop]})
    state = "live" if ended is None else "ended"
    return build_message(f"🔎 Investigating: {one_line}", blocks, f"run.{_id_part(run_id)}.{state}")


def step_message(step: Step, *, excerpt_chars: int = 1200, thought_chars: int = 2000) -> Message:
    """One step in the thread: status, call, duration, the thought (quoted), an observation excerpt, any approval."""
    if step.prose:
        head, summary = f"💬 *Step {step.index}* · the model answered in prose; asked to confirm", "prose answer"
        call_text = ""
    elif step.call is None:
        head, summary = f"⚠️ *Step {step.index}* · the model's reply had no usable action", "no usable action"
        call_text = ""
    else:
        status = "⏳" if step.pending else ("✗" if step.error else "✓")
        what = " · waiting for approval" if step.pending else (f" · {step.error}" if step.error else "")
        head, summary = f"{status} *Step {step.index}*{what} · {duration(step.ms)}", step.call.render()
        shown, more = excerpt(summary, _CALL_CHARS, _CALL_CHARS)
        call_text = (
            "\n" + code_block(shown) + (f"\n_… {more:,} more characters of arguments in the trace_" if more else "")
        )
    texts = [head + call_text]
    if step.thought.strip():
        thought, more = excerpt(step.thought.strip(), thought_chars, _THOUGHT_CHARS, quoted)
        texts.append(quoted(thought) + more_marker(more))
    room = MESSAGE_CHARS - sum(size(t) for t in texts)
    if step.observation:
        shown, more = excerpt(step.observation, excerpt_chars, room - 100)
        texts.append(
            code_block(shown) + more_marker(more)
            if shown.strip()
            else (more_marker(more).strip() or "_(blank output)_")
        )
    else:
        texts.append("_(no output)_")
    blocks = [block for text in texts for block in section_blocks(text)]
    if step.approval is not None:
        blocks.append(context_block(_approval_line(step)))
    status_word = "✓" if step.ok and not step.pending else ("⏳" if step.pending else "✗")
    return build_message(f"{status_word} Step {step.index}: {clip(summary, 300)}", blocks, f"step.{step.index}")


def approval_request(
    request: ApprovalRequest, approval_id: str, *, expires_at: datetime, requester: str | None
) -> Message:
    """Ask for an Approve/Deny on one exact call; both buttons carry only the opaque `approval_id`."""
    _check_value(approval_id, "approval_id")
    name, rendered = request.call.name, request.call.render()
    shown, more = excerpt(rendered, 6000, 6000)
    what = f"OpsAgent wants to run this (run {_short_code(request.run_id)}, step {request.step}):\n{code_block(shown)}"
    if "`" in shown:
        what += f"\n_Backticks in the arguments are shown as {BACKTICK_STANDIN} so they cannot end the code block._"
    if more:
        what += f"\n⚠️ _The call is too long to show in full ({more:,} more characters): read it in the trace before approving._"
    header = clip(f"🔐 Approval needed: {name}", HEADER_CHARS)
    blocks: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": header, "emoji": True}}]
    blocks += section_blocks(what)
    if request.description.strip():
        blocks += section_blocks(f"*What it does:* {clip_literal(request.description.strip(), 1000)}")
    if request.thought.strip():
        thought, more = excerpt(request.thought.strip(), 2000, _THOUGHT_CHARS, quoted)
        blocks += section_blocks(f"*Why:*\n{quoted(thought)}{more_marker(more)}")
    facts = [f"⌛ Expires {slack_date(expires_at, '{date_short_pretty} {time}')}"]
    if requester:
        facts.append(f"run requested by {user_ref(requester)}")
    facts.append(f"call hash {inline_code(request.args_hash[:12])}")
    blocks.append(context_block(" · ".join(facts)))
    confirm = _confirm(
        "Approve this action?", f"Run {clip(name, 200)}(…)? This changes production.", "Approve", "Cancel"
    )
    approve = _button("✅ Approve", APPROVE, approval_id, "primary", confirm)
    deny = _button("❌ Deny", DENY, approval_id, "danger")
    prefix = f"approval.{_id_part(approval_id)}.request"
    blocks.append({"type": "actions", "block_id": f"{prefix}.actions", "elements": [approve, deny]})
    return build_message(f"🔐 Approval needed: {clip(rendered, 300)}", blocks, prefix)


def approval_decided(
    request_summary: str,
    decision: Literal["approved", "denied", "expired", "voided"],
    by: str | None,
    at: datetime,
    reason: str = "",
    *,
    approval_id: str = "",
    expired_after: timedelta = timedelta(minutes=15),
) -> Message:
    """The approval message once decided: no buttons, who decided and when, under new block_ids."""
    when = slack_date(at)
    match decision:
        case "approved":
            line, plain = f"✅ Approved by {user_ref(by)} at {when}", "✅ Approved"
        case "denied":
            line, plain = f"❌ Denied by {user_ref(by)} at {when}", "❌ Denied"
        case "expired":
            minutes = f"{expired_after.total_seconds() / 60:g}"
            line = f"⌛ Expired: not approved within {minutes} min (treated as a denial) · {when}"
            plain = "⌛ Expired"
        case "voided":
            line, plain = f"⏹ Voided: the run was stopped · {when}", "⏹ Voided"
        case _:
            assert_never(decision)
    if reason.strip():
        line += f": {clip_literal(' '.join(reason.split()), 300)}"
    shown, more = excerpt(request_summary, 2000, 2000)
    blocks = section_blocks(f"*Action:*\n{code_block(shown)}{more_marker(more)}")
    blocks.append(context_block(line))
    key = _id_part(approval_id) if approval_id else _id_part(request_summary + "\x00" + at.isoformat())
    return build_message(f"{plain}: {clip(request_summary, 300)}", blocks, f"approval.{key}.{decision}")


def final_message(
    result: RunResult,
    *,
    trace_name: str | None,
    trace_url: str | None = None,
    max_messages: int = 5,
    stopped_by: str = "",
) -> list[Message]:
    """The end of a run: the answer (or a plain failure and the best answer so far), evidence, a footer and,
    with `trace_url`, a "View trace" link to the trace viewer. `stopped_by`: who stopped a cancelled run (a user
    id), rendered as a real mention in place of the trace's plain-text detail, which says the same.

    Long answers are split across at most `max_messages` messages without breaking code fences."""
    usage = result.usage
    words = stop_reason_words(result.stop_reason, steps=usage.steps)
    detail = f" — {clip_literal(result.detail.strip(), 1500)}" if result.detail.strip() else ""
    shown = words
    if stopped_by and result.stop_reason is StopReason.CANCELLED:
        shown, detail = f"stopped by {user_ref(stopped_by)}", ""
    body = result.answer if result.ok else result.partial_answer
    if result.ok:
        first = f"✅ *Investigation finished:* {clip_literal(' '.join(result.task.split()), 300)}"
        fallback = f"✅ Investigation finished: {clip(result.task, 300)}"
    else:
        verb, icon = ("paused", "⏸") if result.stop_reason is StopReason.AWAITING_APPROVAL else ("stopped", "❌")
        first = f"{icon} *Investigation {verb}:* {shown}{detail}"
        fallback = f"{icon} Investigation {verb}: {words}"
        if body and body.strip():
            first += "\n⚠️ *Not a final answer.* What the agent knew when it stopped:"
    body = (body or "").strip()
    cap = max_messages * MESSAGE_CHARS
    body_blocks = section_blocks(markdown_to_mrkdwn(body[:cap])) if body else []
    if len(body) > cap:
        body_blocks.append(context_block(_CUT))
    tail = [*_evidence(result, body or ""), context_block(_footer(result, trace_name))]
    if trace_url:
        tail.append(context_block(f"🔎 {link(trace_url, 'View trace')}: every step, in full, in your browser"))
    pages = _paginate(section_blocks(first), body_blocks, tail, max_messages)
    messages = []
    for number, page in enumerate(pages, start=1):
        label = fallback if number == 1 else f"Answer, part {number} of {len(pages)}"
        if number > 1:
            page.insert(0, context_block(f"_Continued: part {number} of {len(pages)}_"))
        messages.append(build_message(label, page, f"final.{_id_part(result.run_id)}.{number}"))
    return messages


def ephemeral(text: str) -> Message:
    """A short reply only the clicker sees ("already decided by …"). `text` is trusted mrkdwn: build any
    untrusted part with `literal` (or `escape_mrkdwn`) and `user_ref`."""
    return build_message(text, section_blocks(text)[:3] or section_blocks("(empty)"), "ephemeral", escape=False)


def _footer(result: RunResult, trace_name: str | None) -> str:
    usage = result.usage
    tokens = f"{'≈' if usage.estimated_turns else ''}{usage.prompt_tokens:,} prompt tokens"
    parts = [
        f"{usage.steps} steps",
        tokens,
        *([f"${usage.cost_usd:.4f}"] if usage.cost_usd else []),  # no price configured: no cost, not "$0.0000"
        duration(usage.elapsed_s * 1000),
        f"stop: {result.stop_reason.value}",
        f"run {_short_code(result.run_id)}",
    ]
    if trace_name:
        parts.append(f"trace {_short_code(trace_name, 300)}")
    return " · ".join(parts)


def _evidence(result: RunResult, body: str) -> list[dict[str, Any]]:
    """The steps the answer cites ("step 3", "steps 4-5"), each with its call; cited steps that do not exist."""
    if not body.strip():
        return []
    refs = step_references(body)
    cited = [s for s in result.steps if s.index in refs]
    if not cited and not refs.numbers:
        return [context_block(f"_The answer cites no step; the trace has all {len(result.steps)}._")]
    lines = ["*Evidence cited:*"]
    for step in cited[:_MAX_EVIDENCE]:
        mark = "✓" if step.ok else f"✗ {step.error}"
        call = _short_code(step.call.render(), 150) if step.call else "_no usable action_"
        lines.append(f"• Step {step.index} {mark} {call}")
    if len(cited) > _MAX_EVIDENCE:
        lines.append(f"• … and {len(cited) - _MAX_EVIDENCE} more cited steps")
    missing = sorted(refs.leading - {step.index for step in result.steps})
    if missing:
        listed = ", ".join(str(n) for n in missing[:10]) + (", …" if len(missing) > 10 else "")
        lines.append(f"⚠️ The answer cites step(s) {clip(listed, 200)}, which the trace does not have.")
    return section_blocks("\n".join(lines))


def _paginate(
    head: list[dict[str, Any]], body: list[dict[str, Any]], tail: list[dict[str, Any]], max_pages: int
) -> list[list[dict[str, Any]]]:
    """Blocks as at most `max_pages` messages of at most MAX_BLOCKS - 1 blocks (room for a label), aiming at
    MESSAGE_CHARS each; the body is cut, with a marker, where it does not fit, and the tail always fits."""
    pages, used = [list(head)], sum(map(_units, head))
    tail_units = sum(map(_units, tail))

    def fits(block: dict[str, Any]) -> bool:
        last = len(pages) >= max_pages
        if len(pages[-1]) + 1 + ((len(tail) + 1) if last else 0) > MAX_BLOCKS - 1:
            return False
        return not pages[-1] or used + _units(block) + (tail_units if last else 0) <= MESSAGE_CHARS - 100

    for block in body:
        if not fits(block) and len(pages) < max_pages:
            pages.append([])
            used = 0
        if not fits(block):
            pages[-1].append(context_block(_CUT))
            break
        pages[-1].append(block)
        used += _units(block)
    too_many = len(pages[-1]) + len(tail) > MAX_BLOCKS - 1 or used + tail_units > MESSAGE_CHARS - 100
    if too_many and len(pages) < max_pages:
        pages.append([])
    pages[-1] += tail
    return pages


def _approval_line(step: Step) -> str:
    approval = step.approval
    assert approval is not None
    when = f" at {slack_date(approval.at)}" if approval.at else ""
    reason = f": {clip_literal(' '.join(approval.reason.split()), 300)}" if approval.reason.strip() else ""
    match approval.decision:
        case "approved":
            return f"🔐 Approved by {user_ref(approval.by)}{when}{reason}"
        case "denied":
            return f"🔐 Denied by {user_ref(approval.by)}{when}{reason}"
        case "pending":
            return "🔐 Waiting for an approval"
        case _:
            assert_never(approval.decision)


def _units(block: dict[str, Any]) -> int:
    if block["type"] == "context":
        return sum(size(e.get("text", "")) for e in block["elements"])
    text = block.get("text")
    return size(text["text"]) if text else 0


def _short_code(text: str, units: int = 100) -> str:
    """`text` as inline code of at most `units` size (cut with "…")."""
    return clip_mrkdwn(inline_code(text[:units]), units)


def section_blocks(text: str) -> list[dict[str, Any]]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": c}} for c in split_mrkdwn(text, SECTION_CHARS)]


def context_block(text: str) -> dict[str, Any]:
    chunks = split_mrkdwn(text, CONTEXT_TEXT_CHARS) or ["…"]
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": chunks[0]}]}


def _button(text: str, action_id: str, value: str, style: str, confirm: dict[str, Any] | None = None) -> dict[str, Any]:
    button = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "value": value,
        "style": style,
    }
    return button | ({"confirm": confirm} if confirm else {})


def _confirm(title: str, text: str, yes: str, no: str) -> dict[str, Any]:
    return {
        "title": {"type": "plain_text", "text": clip(title, 100)},
        "text": {"type": "plain_text", "text": clip(text, 300)},
        "confirm": {"type": "plain_text", "text": clip(yes, 30)},
        "deny": {"type": "plain_text", "text": clip(no, 30)},
        "style": "danger",
    }


def _check_value(value: str, what: str) -> None:
    if not value or size(value) > BUTTON_VALUE_CHARS:
        raise ValueError(f"{what} must be 1 to {BUTTON_VALUE_CHARS} characters to fit a button value")


def _id_part(text: str) -> str:
    """`text` if it is a short, plain id; else a stable hash of it (block_ids must stay short and plain)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return text if _SAFE_ID.fullmatch(text) else f"h{digest}"


def build_message(fallback: str, blocks: list[dict[str, Any]], prefix: str, *, escape: bool = True) -> Message:
    """Blocks with unique block_ids under `prefix` (kept where set), within MAX_BLOCKS; an escaped fallback."""
    if len(blocks) > MAX_BLOCKS:
        blocks = [*blocks[: MAX_BLOCKS - 1], context_block("✂️ _Cut: too much for one Slack message; see the trace._")]
    for number, block in enumerate(blocks):
        block.setdefault("block_id", f"{prefix}.{number}")
    text = " ".join(fallback.split())
    text = escape_mrkdwn(clip(text, 700)) if escape else clip_mrkdwn(text, FALLBACK_CHARS)
    return Message(text=text or "OpsAgent", blocks=blocks)
