"""What Slack shows of the runs API clients start: the opening message of a run posted in a channel (its thread holds
the run, as a mention's does), and the message that carries an approval of a run posted in no channel.

The task is the client's text, redacted at the API's door: quoted and escaped here, so it cannot mention, link or
open a code block.
"""

from __future__ import annotations

from bot.slack.blocks import Message, build_message, context_block, section_blocks, short_code
from bot.slack.mrkdwn import clip, escape_mrkdwn, link, quoted, user_ref

TASK_CHARS = 1500
"""How much of the task an opening message quotes (the summary in the thread and the trace keep it whole)."""


def api_run_opened(requested_by: str, task: str) -> Message:
    """The channel message an API client's run opens with: who asked (`api:claude`), and what, quoted."""
    asked = f"🤖 {user_ref(requested_by)} asked OpsAgent to investigate:\n{quoted(clip(task, TASK_CHARS))}"
    blocks = [
        *section_blocks(asked),
        context_block("The investigation runs in this thread: steer it, stop it and approve its actions here."),
    ]
    fallback = f"{user_ref(requested_by)} asked OpsAgent to investigate: {escape_mrkdwn(clip(task, 300))}"
    return build_message(fallback, blocks, "api.opened", escape=False)


def quiet_approval_context(run_id: str, requested_by: str, task: str, trace_url: str | None) -> Message:
    """The message in `[api] approval_channel` whose thread holds one approval of a run posted in no channel: who
    started the run through the API, what it investigates, where its trace is."""
    head = (
        f"🔐 An investigation {user_ref(requested_by)} started through the API needs an approval (in the thread). "
        f"It was asked:\n{quoted(clip(task, TASK_CHARS))}"
    )
    facts = [f"Run {short_code(run_id)}"]
    if trace_url:
        facts.append(link(trace_url, "View trace"))
    blocks = [*section_blocks(head), context_block(" · ".join(facts))]
    fallback = f"An investigation {user_ref(requested_by)} started through the API needs an approval"
    return build_message(fallback, blocks, f"api.approval.{run_id}", escape=False)
