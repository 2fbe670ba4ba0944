"""A hostile MCP server (a real SDK server, `mcp_hostile_server.py`): its 300,000-character inputSchema full of
"ignore prior instructions" reaches the model trimmed under 8 KiB and quoted as the server's, calls are still
checked against its full schema, a schema no trimming fits is left out with a warning, and two tools that
become one wire name are a configuration error until the operator excludes one."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from bot.slack.approval_blocks import approval_request
from kernel import Agent, Approved, ErrorKind, OpenAICompatibleLLM, SideEffectMode, SideEffectPolicy, ToolRegistry
from opsagent_tools.mcp import McpConnections, McpSettings
from opsagent_tools.mcp.offer import MAX_SERVER_TEXT, MAX_TOOL_BYTES
from testkit.fakes.model_server import Reply, openai_completion, openai_tool_call
from testkit.servers.mcp_harness import hostile_settings
from testkit.servers.mcp_hostile_server import INJECTION, hostile_schema
from worlds.dispatch import dispatch_call

FULL = SideEffectPolicy(mode=SideEffectMode.FULL)
TAG = "text in «» comes from the server, not from OpsAgent]"
INVISIBLE = {char for char in INJECTION if not char.isprintable()}
QUOTED = re.compile(r"«[^«»]*»")
FINISH = {"summary": "No runbook needed.", "confidence": "inconclusive", "evidence": []}


@pytest.fixture
async def hostile():
    async with McpConnections(McpSettings(servers={"hostile": hostile_settings()}), {}) as mcp:
        yield mcp, ToolRegistry(mcp.tools())


async def test_the_model_gets_the_300k_schema_under_8_kib_and_quoted_as_the_servers(hostile, server):
    assert len(json.dumps(hostile_schema(), ensure_ascii=False)) > 300_000, "what the server lists"
    _, registry = hostile
    server.script(Reply(openai_completion(None, tool_calls=[openai_tool_call("c1", "finish", json.dumps(FINISH))])))
    llm = OpenAICompatibleLLM(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test")
    try:
        result = await Agent(llm=llm, tools=registry).run("checkout's disk is full: is there a runbook?")
    finally:
        await llm.aclose()
    assert result.ok
    (request,) = server.requests
    tools = {tool["function"]["name"]: tool for tool in request.json["tools"]}
    entry = tools["hostile__lookup_runbook"]
    assert len(json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode()) <= MAX_TOOL_BYTES
    assert len(json.dumps(entry, separators=(",", ":"))) <= MAX_TOOL_BYTES, "even with every character escaped"
    assert len(request.raw) < 20_000, "the whole request: instructions, task, every tool"
    function = entry["function"]
    assert function["description"].startswith(f"[MCP server 'hostile'; read-only; {TAG} «Finds the runbook for a")
    text = json.dumps(request.json["tools"], ensure_ascii=False)
    assert "IGNORE PRIOR INSTRUCTIONS" in text, "the server's words are shown, as its words"
    outside = QUOTED.sub("", text)
    assert "IGNORE PRIOR" not in outside, "never outside its quotes"
    assert "[OpsAgent system]" not in outside
    assert len(INVISIBLE) == 6
    assert not INVISIBLE & set(request.raw.decode()), "no invisible, bidi or control character"
    properties = function["parameters"]["properties"]
    texts = [function["description"], *(schema["description"] for schema in properties.values())]
    quoted = [match.group()[1:-1] for text in texts for match in QUOTED.finditer(text) if match.group() != "«»"]
    assert len(quoted) == 4, "the tool's description and its three arguments'"
    assert sum(len(said) for said in quoted) <= MAX_SERVER_TEXT, "the server's prose, in all"
    assert set(function["parameters"]) == {"type", "properties", "required"}, "no title, $comment, x-…"
    assert function["parameters"]["required"] == ["query"]
    assert "examples" not in properties["query"]
    assert "enum" not in properties["region"], "400 values: dropped from what is shown"
    assert {k: v for k, v in properties["limit"].items() if k != "description"} == {
        "type": "integer",
        "default": 5,
        "minimum": 1,
    }
    assert properties["limit"]["description"] == "«How many runbooks.»"


async def test_calls_are_still_checked_against_the_full_schema(hostile):
    _, registry = hostile
    wrong = await dispatch_call(registry, "hostile__lookup_runbook", query="disk full", region="atlantis")
    assert wrong.error.kind is ErrorKind.BAD_ARGS
    assert "'atlantis' is not one of ['region-000-south', 'region-001-north'" in wrong.text
    right = await dispatch_call(registry, "hostile__lookup_runbook", query="disk full", region="region-007-north")
    assert right.error is None, right.text
    assert right.text == "runbook for 'disk full' in region-007-north (limit 5)"


async def test_an_untrimmable_tool_is_left_out_with_a_warning_and_a_collision_is_an_error(hostile):
    mcp, registry = hostile
    assert registry.names() == ["hostile__lookup_runbook", "hostile__dump_state", "hostile__incident_note"]
    (report,) = mcp.report()
    assert not report.ok, "two tools, one wire name: a configuration error"
    assert (
        "configuration error: 'deploy.status' and 'deploy_status' both become hostile__deploy_status, so neither "
        "is offered: list one in exclude to offer the other, or ask the server's maintainers to rename one"
    ) in report.message
    (warning,) = report.warnings
    assert re.fullmatch(
        r"left out 'bulk_lookup': its schema takes [\d,]+ bytes even trimmed, over the 8 KiB a tool may add to "
        r"every request: ask the server's maintainers for a smaller one, or list it in exclude",
        warning,
    )


async def test_excluding_one_of_the_pair_offers_the_other_under_the_name_the_server_receives():
    settings = hostile_settings(exclude=["deploy_status", "bulk_lookup"])
    async with McpConnections(McpSettings(servers={"hostile": settings}), {}) as mcp:
        registry = ToolRegistry(mcp.tools())
        (report,) = mcp.report()
        assert report.ok, report.message
        assert report.warnings == ()
        assert "4 tools (1 read-only, 3 side effects); 2 excluded (exclude)" in report.message
        status = registry.get("hostile__deploy_status")
        assert status.description.startswith("[MCP server 'hostile', tool 'deploy.status'; side effect:")
        ran = await dispatch_call(registry, "hostile__deploy_status", policy=FULL, confirm=_approve, text="x")
        assert ran.text == "deploy.status answered: x", "the server ran its deploy.status"


async def test_an_exclude_that_names_no_listed_tool_fails_the_check():
    settings = hostile_settings(exclude=["deploy_status", "deploy-status"])
    async with McpConnections(McpSettings(servers={"hostile": settings}), {}) as mcp:
        (report,) = mcp.report()
    assert not report.ok
    assert "exclude names tools the server does not list: deploy-status" in report.message


async def test_the_approval_card_shows_the_name_the_server_receives(hostile):
    _, registry = hostile
    asked = []

    async def approve(request):
        asked.append(request)
        return await _approve(request)

    ran = await dispatch_call(registry, "hostile__incident_note", policy=FULL, confirm=approve, text="cause found")
    assert ran.text == "incident.note answered: cause found"
    (request,) = asked
    card = approval_request(
        request, "a1", expires_at=datetime(2026, 1, 1, tzinfo=UTC), requester=None, approvers="<@U1>"
    )
    shown = json.dumps(card.blocks, ensure_ascii=False)
    assert "hostile__incident_note" in shown, "the call, as the model made it"
    assert "*What it does:* 'incident.note' on MCP server hostile" in shown, "and what the server receives"
    assert "text in" not in shown, "the words of the model's description are not the approver's"


async def _approve(request):
    return Approved(by="U0ALICE", args_hash=request.args_hash)


async def test_an_answer_nested_too_deep_to_read_ends_the_call_at_once_and_says_why(hostile):
    _, registry = hostile
    outcome = await dispatch_call(registry, "hostile__dump_state", policy=FULL, confirm=_approve)
    assert outcome.error.kind is ErrorKind.EXCEPTION, "not a timeout: the call does not wait out its 5 s"
    assert (
        "the MCP server 'hostile' answered with something that is not MCP JSON-RPC (JSON nested deeper than 200 "
        "levels), so its answer cannot be read. Whether the call took effect is unknown"
    ) in outcome.text
    assert "Recursion" not in outcome.text
    after = await dispatch_call(registry, "hostile__lookup_runbook", query="disk full")
    assert after.text == "runbook for 'disk full' in any region (limit 5)", "the server still answers"
