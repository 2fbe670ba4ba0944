"""`opsagent postmortem RUN_ID`: the draft of a stored run in the terminal or a file, its timeline the run's audit
log and, with a bot token, the thread's messages read from Slack (the fake Web API here)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.audit.trail import AuditEvent
from bot.cli.main import main
from bot.store.factory import opened_store
from bot.store.records import utc_now
from kernel import Agent, ScriptedModel, text_turn
from testkit.fakes.slack_api import SlackFake
from testkit.slack_bot import BOB, CHANNEL, USERS, IncidentBot, save_run

VERDICT = text_turn(
    "finish",
    summary="Orders timed out.",
    root_cause="The pool shrank.",
    confidence="likely",
    evidence=[{"claim": "pool 5", "steps": [1]}],
)


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


async def stored_run(url: str, thread_ts: str) -> str:
    trace = await Agent(
        llm=ScriptedModel([text_turn("query_metrics", service="orders"), VERDICT]), tools=IncidentBot([]).tools
    ).run("orders slow")
    async with opened_store(url) as store:
        await save_run(store, trace, thread_ts=thread_ts)
        start = utc_now()
        for seconds, kind, detail in (
            (0, "run_started", {"task": "orders slow"}),
            (5, "tool_call", {"step": 1, "tool": "query_metrics"}),
            (9, "run_finished", {"stop_reason": "finish"}),
        ):
            await store.audit.audit(
                AuditEvent(
                    at=start + timedelta(seconds=seconds), kind=kind, run_id=trace.run_id, actor=BOB, detail=detail
                )
            )
    return trace.run_id


def test_the_draft_of_a_stored_run_from_its_audit_log(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    url = f"sqlite:///{tmp_path}/runs.db"
    config = tmp_path / "opsagent.toml"
    config.write_text(f'[store]\nurl = "{url}"\n')
    run_id = asyncio.run(stored_run(url, "1700000000.000100"))
    code, out, _ = cli(capsys, "--config", config, "postmortem", run_id, "--facts-only")
    assert code == 0
    assert out.startswith("# Postmortem draft: orders slow\n")
    rows = [line for line in out.splitlines() if line.startswith("| 20")]
    assert [row[2:-2].split(" | ")[1:] for row in rows] == [
        [BOB, "investigation started: orders slow"],
        ["OpsAgent", 'step 1: query\\_metrics\\(service="orders"\\) → orders 5xx jumped from 0.10% to 12.0% at t-10m'],
        ["OpsAgent", "investigation ended: finish"],
    ]
    assert "- The thread's messages: not read: SLACK_BOT_TOKEN is not set" in out
    assert "No narrative was drafted (no model is configured)" in out
    target = tmp_path / "draft.md"
    code, out, _ = cli(capsys, "--config", config, "postmortem", run_id, "--facts-only", "--output", target)
    assert (code, out) == (0, f"wrote the postmortem draft to {target}\n")
    assert target.read_text().startswith("# Postmortem draft: orders slow")
    code, _, err = cli(capsys, "--config", config, "postmortem", "r-nope")
    assert code == 2
    assert "no run r-nope in the run store" in err


async def test_with_a_bot_token_the_threads_messages_are_read(capsys, tmp_path, monkeypatch):
    async with SlackFake(users=USERS) as slack:
        parent = slack.add_message(CHANNEL, "orders are slow", user=BOB)
        slack.add_message(CHANNEL, "restarting the pool did nothing", user=BOB, thread_ts=parent.ts)
        url = f"sqlite:///{tmp_path}/runs.db"
        config = tmp_path / "opsagent.toml"
        config.write_text(f'[store]\nurl = "{url}"\n')
        run_id = await stored_run(url, parent.ts)
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
        monkeypatch.setenv("SLACK_API_URL", slack.api_url)
        from bot.cli.postmortem import postmortem_draft
        from bot.settings import load_settings

        markdown = await postmortem_draft(load_settings(config), run_id, facts_only=True)
    assert "- The thread's messages: 2 messages by people" in markdown
    assert f"| {BOB} | restarting the pool did nothing |" in markdown
