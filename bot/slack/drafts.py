"""The Slack side of drafts: the postmortem file's upload, the status update's message, and what is said when
there is nothing to draft from. Pure functions: the drafts' service queues them on the outbox.

Everything drafted is shown as a draft, with who wrote it (the recorded facts, a model); the status update is
escaped, so a fact quoted from an alert or a message cannot ping the channel or forge a link.
"""

from __future__ import annotations

from typing import Any

from bot.slack.blocks import Message, build_message, context_block, section_blocks
from bot.slack.mrkdwn import clip_literal

NO_INVESTIGATION = (
    "There is no investigation in this thread to draft from. Ask in the thread of an investigation "
    "(“@opsagent postmortem” or “@opsagent status”), or run `opsagent postmortem RUN_ID` in a terminal."
)
DRAFTING = {
    "postmortem": "📝 Drafting a postmortem from this investigation's records…",
    "status": "📝 Drafting a status update…",
}
PART_CHARS = 1200


def postmortem_upload(markdown: str, run_id: str, *, drafted_by: str, problem: str) -> dict[str, Any]:
    """The `files_upload_v2` arguments of a postmortem draft: the Markdown file and a one-line comment on it."""
    if drafted_by:
        how = (
            "the timeline and actions are the recorded facts; the sections marked ✎ were drafted by "
            f"{clip_literal(drafted_by, 100)}"
        )
    else:
        how = f"only the recorded facts (no narrative: {clip_literal(problem, 200)}); the rest is for people to write"
    return {
        "content": markdown,
        "filename": f"postmortem-draft-{run_id}.md",
        "title": f"Postmortem draft (run {run_id})",
        "initial_comment": f"📝 Postmortem draft: {how}. Check it, then copy it where your postmortems live.",
    }


def status_message(title: str, parts: dict[str, str], *, drafted_by: str, problem: str) -> Message:
    """The status update as a message to copy: its four parts, each escaped, and who wrote it."""
    labels = (
        ("affected", "Affected"),
        ("known", "What we know"),
        ("doing", "What is being done"),
        ("next_update", "Next update"),
    )
    lines = [f"*Status update: {clip_literal(title, 150)}*"]
    lines += [f"*{label}:* {clip_literal(' '.join(parts[key].split()), PART_CHARS)}" for key, label in labels]
    who = (
        f"Drafted by {clip_literal(drafted_by, 100)} from the recorded facts"
        if drafted_by
        else (f"From the recorded facts only (no model: {clip_literal(problem, 200)})")
    )
    blocks = [*section_blocks("\n".join(lines)), context_block(f"✎ A draft for you to check and send yourself. {who}.")]
    return build_message(f"Status update draft: {title}", blocks, "draft.status")
