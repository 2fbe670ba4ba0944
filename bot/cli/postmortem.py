"""`opsagent postmortem RUN_ID`: the postmortem draft of a run in the store, in the terminal (or a file), the same
draft “@opsagent postmortem” uploads in its thread.

The thread's messages are read when SLACK_BOT_TOKEN is set (with the channels:history scope); the narrative is
written by the configured model unless `--facts-only`, and the draft says which.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from bot.agent import build_llm
from bot.cli.stored import existing_store
from bot.drafts.facts import gather_facts
from bot.drafts.postmortem import draft_postmortem
from bot.settings import Settings
from bot.slack.client import web_client
from bot.slack.settings import SlackSecrets
from bot.slack.thread_history import ThreadHistory, human_messages
from bot.store.records import utc_now

NO_TOKEN = "SLACK_BOT_TOKEN is not set"


async def postmortem_draft(
    settings: Settings, run_id: str, *, facts_only: bool, environ: Mapping[str, str] = os.environ
) -> str:
    """The Markdown draft of run `run_id`; a ValueError when the store has no such run."""
    llm = None if facts_only else build_llm(settings.llm, environ)
    async with existing_store(settings) as store:
        record = await store.runs.get_run(run_id)
        if record is None:
            raise ValueError(f"no run {run_id} in the run store: `opsagent memory list` shows finished runs' ids")
        history = ThreadHistory((), NO_TOKEN)
        if environ.get("SLACK_BOT_TOKEN"):
            client = web_client(SlackSecrets.from_env(environ))
            history = await human_messages(client, record.channel, record.thread_ts)
        facts = await gather_facts(
            record, history, audit=store.audit, side_effects=store.side_effects, feedback=store.feedback
        )
        draft = await draft_postmortem(facts, llm, now=utc_now())
    return draft.markdown
