"""`opsagent postmortem RUN_ID|TRACE`: the postmortem draft of a run in the terminal (or a file), the same draft
“@opsagent postmortem” uploads in its thread, from the run store (`RUN_ID`) or from a trace file alone (`TRACE`).

A stored run's thread messages are read when SLACK_BOT_TOKEN is set (with the channels:history scope); a trace file
needs no run store and has no thread. The narrative is written by the configured model unless `--facts-only`, and
the draft says which.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from bot.agent import build_llm
from bot.cli.stored import existing_store, names_a_trace_file
from bot.drafts.facts import IncidentFacts, gather_facts, trace_facts
from bot.drafts.postmortem import draft_postmortem
from bot.settings import Settings
from bot.slack.client import web_client
from bot.slack.settings import SlackSecrets
from bot.slack.thread_history import ThreadHistory, human_messages
from bot.store.records import utc_now
from kernel import load_trace

NO_TOKEN = "SLACK_BOT_TOKEN is not set"


async def postmortem_draft(
    settings: Settings, target: str, *, facts_only: bool, environ: Mapping[str, str] = os.environ
) -> str:
    """The Markdown draft of the run `target` names: a trace file (`names_a_trace_file`), else a run id in the run store;
    a ValueError when the file is not a trace or the store has no such run."""
    llm = None if facts_only else build_llm(settings.llm, environ)
    facts = trace_facts(load_trace(Path(target)), target) if names_a_trace_file(target) else None
    if facts is None:
        facts = await _stored_facts(settings, target, environ)
    draft = await draft_postmortem(facts, llm, now=utc_now())
    return draft.markdown


async def _stored_facts(settings: Settings, run_id: str, environ: Mapping[str, str]) -> IncidentFacts:
    async with existing_store(settings) as store:
        record = await store.runs.get_run(run_id)
        if record is None:
            raise ValueError(
                f"no run {run_id} in the run store: `opsagent memory list` shows finished runs' ids, and a trace "
                "file (traces/<run id>.json) works too"
            )
        history = ThreadHistory((), NO_TOKEN)
        if environ.get("SLACK_BOT_TOKEN") and record.channel:
            client = web_client(SlackSecrets.from_env(environ))
            history = await human_messages(client, record.channel, record.thread_ts)
        return await gather_facts(
            record, history, audit=store.audit, side_effects=store.side_effects, feedback=store.feedback
        )
