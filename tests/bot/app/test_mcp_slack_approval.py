"""End to end: a side-effect MCP tool, served by a real MCP server process, runs only after a click on the
Slack approval card (signed events and clicks in, the fake Slack Web API out, a scripted model)."""

from __future__ import annotations

import json

import pytest

from bot.slack.action_ids import APPROVE, DENY
from kernel import text_turn
from opsagent_tools.mcp import McpConnections, McpSettings
from testkit.fakes.slack_api import SlackFake
from testkit.servers.mcp_harness import TOKEN, stdio_settings
from testkit.slack_bot import CHANNEL, FINISH, USERS, IncidentBot, running_app

READ = text_turn("ops__recent_incidents", "Known: nothing. Why: the tracker has context.", service="checkout", limit=1)
NOTE = text_turn("ops__add_note", "Why: record the cause on the incident.", service="checkout", text="cause: v2.14.0")


@pytest.fixture
def notes_file(tmp_path):
    return tmp_path / "notes.txt"


@pytest.fixture
async def incident_bot(script, notes_file):
    """The incident's tools plus the tracker's, from the MCP server over stdio, for the life of the test."""
    environ = {"OPS_TOKEN": TOKEN, "OPS_NOTES_FILE": str(notes_file)}
    async with McpConnections(McpSettings(servers={"ops": stdio_settings()}), environ) as mcp:
        bot = IncidentBot(script)
        for tool in mcp.tools():
            bot.tools.add(tool)
        yield bot


@pytest.fixture
async def harness(incident_bot, slack_settings, run_store):
    async with (
        SlackFake(users=USERS) as slack,
        running_app(slack, incident_bot, run_store, settings=slack_settings) as harness,
    ):
        yield harness


async def test_an_approved_mcp_side_effect_runs_once_after_the_click(harness, script, notes_file):
    script.append([READ, NOTE, FINISH])
    ts = await harness.mention("checkout 5xx: note the cause on the incident")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "an approval message")
    card = json.dumps(message.blocks)
    assert "ops__add_note" in card, "the card names the tool"
    assert "cause: v2.14.0" in card, "and shows the exact arguments"
    assert not notes_file.exists(), "nothing ran before the click"
    assert await harness.click(APPROVE, approval_id, message.ts, ts) == 200
    await harness.ended(ts)
    assert notes_file.read_text() == "checkout: cause: v2.14.0\n"
    await harness.until(
        lambda: "note added to checkout" in json.dumps(harness.slack.message(CHANNEL, message.ts).blocks),
        "the approval's one line, with what the action did",
    )
    assert "approved by" in json.dumps(harness.slack.message(CHANNEL, message.ts).blocks)
    steps = json.dumps([m.blocks for m in harness.thread(ts)])
    assert "INC-100 checkout" in steps, "the read-only MCP call ran without asking"
    assert "note added to checkout" in steps


async def test_a_denied_mcp_side_effect_never_reaches_the_server(harness, script, notes_file):
    script.append([NOTE, FINISH])
    ts = await harness.mention("note the cause on the incident")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "an approval message")
    await harness.click(DENY, approval_id, message.ts, ts)
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the run ends")
    assert not notes_file.exists()
    assert "denied" in json.dumps([m.blocks for m in harness.thread(ts)]).lower()
