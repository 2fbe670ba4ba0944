"""The approval of a side effect in the thread: the request that names its approvers, then one line once decided.

The request is the step's own message, so it reads once: the exact call, why, what it does, who may approve (real
mentions, so they are notified) and the buttons. Once decided, it collapses to one line, and once the action ran
that line carries its outcome: "✅ 6 `rollback_deployment order-service v2.13.2` · approved by @sam at 20:25 · …", and
once checked, whether it held: "… · verified 20:27: http_5xx_rate 12.0% → 0.20% ▁▇▁ · held".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal, assert_never

from bot.slack.action_ids import APPROVE, DENY
from bot.slack.approval_words import REASON_CHARS, refusal_line, verification_line
from bot.slack.blocks import (
    Message,
    StepUrl,
    build_message,
    button,
    confirm_dialog,
    context_block,
    id_part,
    section_blocks,
    short_code,
    step_ref,
)
from bot.slack.mrkdwn import (
    BACKTICK_STANDIN,
    clip,
    clip_literal,
    code_block,
    escape_mrkdwn,
    excerpt,
    inline_code,
    literal,
    more_marker,
    quoted,
    slack_date,
    user_ref,
)
from bot.verdict import Refusal, StepLine, StepStatus, call_words
from bot.verdict_actions import Action, ActionState
from kernel import ApprovalRequest, ToolCall, Verification

Decision = Literal["approved", "denied", "expired", "voided"]
_CALL_CHARS = 6000
_WHY_CHARS = 1500


def approval_request(
    request: ApprovalRequest,
    approval_id: str,
    *,
    expires_at: datetime,
    requester: str | None,
    approvers: str,
    same_call: Sequence[Action] = (),
) -> Message:
    """Ask for an Approve/Deny on one exact call, naming the approvers (`approvers`: our own mrkdwn, e.g.
    `<@U1>, <!subteam^S1>`); both buttons carry only the opaque `approval_id`. `same_call`: what came of the same
    call (same tool and arguments) each time the thread's earlier runs proposed it, said before the buttons."""
    rendered = request.call.render()
    shown, more = excerpt(rendered, _CALL_CHARS, _CALL_CHARS)
    ask = f"🔐 *{request.step}* · *needs approval* from {approvers}"
    what = code_block(shown)
    if "`" in shown:
        what += f"\n_Backticks in the arguments are shown as {BACKTICK_STANDIN} so they cannot end the code block._"
    if more:
        what += f"\n⚠️ _The call is too long to show in full ({more:,} more characters): read it in the trace before approving._"
    blocks = section_blocks(f"{ask}\n{what}")
    why = []
    if request.thought.strip():
        thought, more = excerpt(request.thought.strip(), _WHY_CHARS, _WHY_CHARS * 2, quoted)
        why.append(f"*Why:*\n{quoted(thought)}{more_marker(more)}")
    if request.summary.strip():
        why.append(f"*What it does:* {clip_literal(' '.join(request.summary.split()), 600)}")
    if why:
        blocks += section_blocks("\n".join(why))
    if same_call:
        blocks += section_blocks("\n".join(_same_call_line(action) for action in same_call[-3:]))
    facts = [f"⌛ expires {slack_date(expires_at, '{time}')}"]
    if requester:
        facts.append(f"run requested by {user_ref(requester)}")
    facts.append(f"call hash {inline_code(request.args_hash[:12])}")
    blocks.append(context_block(" · ".join(facts)))
    confirm = confirm_dialog(
        "Approve this action?", f"Run {clip(request.call.name, 200)}(…)? This changes production.", "Approve", "Cancel"
    )
    approve = button("✅ Approve", APPROVE, approval_id, "primary", confirm)
    deny = button("❌ Deny", DENY, approval_id, "danger")
    prefix = f"approval.{id_part(approval_id)}.request"
    blocks.append({"type": "actions", "block_id": f"{prefix}.actions", "elements": [approve, deny]})
    fallback = f"🔐 Step {request.step} needs approval from {approvers}: {escape_mrkdwn(clip(rendered, 300))}"
    return build_message(fallback, blocks, prefix, escape=False)


def _same_call_line(action: Action) -> str:
    """ "⚠️ *The same call ran at 19:16 in this thread, approved by @bob* (step 5 of an earlier run): rolled back …",
    or what else came of it ("… was proposed in this thread before (step 5): denied by @bob at 19:16: not now")."""
    when = slack_date(action.at, "{time}") if action.at is not None else "an earlier step"
    where = f"step {action.step} of an earlier run"
    outcome = f": {literal(action.outcome)}" if action.outcome else ""
    match action.state:
        case ActionState.DONE:
            return (
                f"⚠️ *The same call ran at {when} in this thread, approved by {user_ref(action.by)}* ({where}){outcome}"
            )
        case ActionState.FAILED:
            said = f"ran at {when} in this thread, approved by {user_ref(action.by)}, and failed"
            return f"⚠️ *The same call {said}* ({where}){outcome}"
        case _:
            said = action.said(person=user_ref, moment=lambda at: slack_date(at, "{time}"), text=literal)
            return f"ℹ️ *The same call was proposed in this thread before* ({where}): {said}"


def approval_decided(
    step: int,
    call: ToolCall,
    decision: Decision,
    by: str | None,
    at: datetime,
    reason: str = "",
    *,
    approval_id: str = "",
    expired_after: timedelta = timedelta(minutes=15),
) -> Message:
    """The approval message once decided: one line, no buttons (new block ids); the outcome follows once it ran.
    A denial reads as the step's line will once the run takes it up (`refusal_line`)."""
    when = slack_date(at, "{time}")
    match decision:
        case "approved":
            icon, said = "✅", f"approved by {user_ref(by)} at {when} · running…"
        case "denied":
            icon, said = "🚫", refusal_line(Refusal(by or "", at, reason))
        case "expired":
            icon, said = "⌛", f"expired: not approved within {expired_after.total_seconds() / 60:g} min (a denial)"
        case "voided":
            why = " ".join(reason.split()) or "the run was stopped"
            icon, said = "⏹", f"void: {clip_literal(why, REASON_CHARS)} · {when}"
        case _:
            assert_never(decision)
    line = f"{icon} *{step}* {short_code(call_words(call), 120)} · {said}"
    key = id_part(approval_id) if approval_id else id_part(call.render() + "\x00" + at.isoformat())
    return build_message(
        f"{icon} Step {step} {decision}: {clip(call.render(), 300)}", section_blocks(line), f"approval.{key}.{decision}"
    )


def action_done(line: StepLine, step_url: StepUrl, verified: Verification | None = None) -> Message:
    """A side effect's step once decided and run (or refused): its approval message, now one line with who
    decided, when, what came of it, and its latest check (`verified`) once one was made."""
    fallback = f"Step {line.index} {line.call}: {line.outcome}"
    key = f"action.{line.index}.{line.status}" + (f".{verified.check}.{verified.outcome}" if verified else "")
    return build_message(clip(fallback, 300), section_blocks(action_text(line, step_url, verified)), key)


def action_text(line: StepLine, step_url: StepUrl, verified: Verification | None = None) -> str:
    """An action's line: `✅ *6* `rollback_deployment order-service v2.13.2` · approved by @sam at 20:25 · …`, and
    its latest check: `· verified 20:27: http_5xx_rate 12.0% → 0.20% ▁▇▁ · held`."""
    approval = line.approval
    who = user_ref(approval.by) if approval is not None else "someone"
    when = f" at {slack_date(approval.at, '{time}')}" if approval is not None and approval.at else ""
    match line.status:
        case StepStatus.OK:
            icon, said = "✅", f"approved by {who}{when} · {literal(line.outcome)}"
        case StepStatus.FAILED:
            icon, said = "❌", f"approved by {who}{when} · failed: {literal(line.outcome)}"
        case StepStatus.DENIED:
            icon, said = "🚫", refusal_line(line.refusal) if line.refusal else literal(line.outcome)
        case StepStatus.WAITING | StepStatus.PROSE | StepStatus.UNUSABLE:
            icon, said = "⏳", "waiting for approval"
        case _:
            assert_never(line.status)
    if verified is not None:
        said += f" · {verification_line(verified)}"
    viewer = step_ref(line.index, step_url, "step") if step_url(line.index) else ""
    return f"{icon} *{line.index}* {inline_code(line.call)} · {said}" + (f" · {viewer}" if viewer else "")


ACTION_ICONS = {
    ActionState.DONE: "✅",
    ActionState.FAILED: "❌",
    ActionState.DENIED: "🚫",
    ActionState.EXPIRED: "⌛",
    ActionState.DRY_RUN: "🧪",
    ActionState.REFUSED: "🚫",
    ActionState.WAITING: "⏳",
    ActionState.NOT_RUN: "⏹",
}
"""How each outcome of a side effect is marked in Slack."""


def action_line(action: Action, step_url: StepUrl) -> str:
    """A proposed side effect in the verdict, with what came of it (and its latest check): `🚫 *5*
    `rollback_deployment order-service v2.13.2` · denied by @bob at 19:16: not during peak traffic · step`."""
    said = action.said(person=user_ref, moment=lambda at: slack_date(at, "{time}"), text=literal)
    if action.verified is not None:
        said += f" · {verification_line(action.verified)}"
    viewer = step_ref(action.step, step_url, "step") if step_url(action.step) else ""
    line = f"{ACTION_ICONS[action.state]} *{action.step}* {inline_code(action.call)} · {said}"
    return line + (f" · {viewer}" if viewer else "")
