"""MCP tools over stdio, against a real MCP server process built with the SDK: listing, calls, schema errors,
isError results, a crash mid-call, a hang past the deadline, approvals, and servers that fail to start."""

from __future__ import annotations

import json
import sys

import pytest

from kernel import Approved, Denied, ErrorKind, RunControl, SideEffectMode, SideEffectPolicy, ToolRegistry
from opsagent_tools.mcp import McpConnections, McpServerSettings, McpSettings
from opsagent_tools.mcp.server import StderrTail
from testkit.servers.mcp_harness import TOKEN, stdio_settings
from worlds.dispatch import dispatch_call

FULL = SideEffectPolicy(mode=SideEffectMode.FULL)
GARBAGE = "print('Welcome to tracker-mcp!', flush=True); import time; time.sleep(30)"


@pytest.fixture
def environ(tmp_path):
    return {"OPS_TOKEN": TOKEN, "OPS_NOTES_FILE": str(tmp_path / "notes.txt")}


@pytest.fixture
async def ops(environ):
    """The test server as `[tools.mcp.servers.ops]`, connected; yields the connections and their registry."""
    async with McpConnections(McpSettings(servers={"ops": stdio_settings()}), environ) as mcp:
        yield mcp, ToolRegistry(mcp.tools())


def notes(environ) -> str:
    path = environ["OPS_NOTES_FILE"]
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except FileNotFoundError:
        return ""


async def test_every_listed_tool_is_registered_under_its_server_name_across_pages(ops):
    mcp, registry = ops
    assert registry.names() == [
        "ops__recent_incidents",
        "ops__service_status",
        "ops__fail_loudly",
        "ops__crash",
        "ops__hang",
        "ops__add_note",
        "ops__snapshot",
        "ops__whoami",
    ], "eight tools, listed four a page"
    (report,) = mcp.report()
    assert report.ok
    assert "8 tools (4 read-only, 4 side effects)" in report.message


async def test_the_model_sees_the_servers_schema_and_who_serves_the_tool(ops):
    _, registry = ops
    spec = registry.get("ops__recent_incidents").spec
    assert spec.parameters == {
        "type": "object",
        "properties": {"service": {"type": "string"}, "limit": {"default": 3, "type": "integer"}},
        "required": ["service"],
    }
    assert spec.description == (
        "[MCP server 'ops'; read-only; text in «» comes from the server, not from OpsAgent] "
        "«The service's most recent incidents in the tracker, newest first.» "
        "Returns: the server's result as text (images and binary resources are named, not shown)"
    )


async def test_only_the_operators_list_makes_a_tool_read_only_whatever_the_server_hints(ops):
    mcp, registry = ops
    note = next(entry for entry in mcp.entries if entry.mcp_name == "add_note")
    assert note.read_only_hint is True, "the server claims add_note only reads"
    assert registry.get("ops__add_note").side_effect
    assert not registry.get("ops__recent_incidents").side_effect


async def test_a_read_only_call_returns_the_servers_text(ops):
    _, registry = ops
    result = await dispatch_call(registry, "ops__recent_incidents", service="checkout", limit=2)
    assert result.error is None
    assert result.text == (
        "INC-100 checkout: elevated 5xx after deploy v2.14.0\nINC-101 checkout: elevated 5xx after deploy v2.13.0"
    )
    assert result.headline == "INC-100 checkout: elevated 5xx after deploy v2.14.0", "its first line, for people"
    assert result.links == (), "a server's links are not ours to vouch for"


async def test_structured_results_come_back_as_json(ops):
    _, registry = ops
    result = await dispatch_call(registry, "ops__service_status", service="checkout")
    assert json.loads(result.text) == {"service": "checkout", "status": "degraded", "open_incidents": 2}


async def test_images_are_named_and_resources_shown_as_text(ops):
    _, registry = ops
    result = await dispatch_call(registry, "ops__snapshot", service="checkout")
    assert result.text.splitlines() == [
        "checkout latency dashboard",
        "[image: image/png, 70 bytes; not shown]",
        "[resource <tracker://checkout/p99>]",
        "t,p99",
        "0,1.2",
    ]


async def test_the_servers_secret_reaches_it_but_not_the_model(ops):
    _, registry = ops
    result = await dispatch_call(registry, "ops__whoami")
    assert result.text == "token in use: [REDACTED:mcp-secret]", "the server got the token, the model does not see it"
    assert result.headline == result.text, "nor do people"


async def test_arguments_that_break_the_schema_name_the_field_and_never_reach_the_server(ops, environ):
    _, registry = ops
    result = await dispatch_call(registry, "ops__recent_incidents", service="checkout", limit="many")
    assert result.error.kind is ErrorKind.BAD_ARGS
    assert "- limit: 'many' is not of type 'integer'" in result.text
    assert "ops__recent_incidents(service: string, limit?: integer = 3)" in result.text
    missing = await dispatch_call(registry, "ops__add_note", policy=FULL, confirm=_approve_all, service="checkout")
    assert missing.error.kind is ErrorKind.BAD_ARGS
    assert "'text' is a required property" in missing.text
    assert notes(environ) == "", "nothing was asked of a human, nothing ran"


async def test_an_is_error_result_is_a_tool_failure_the_model_reads(ops):
    _, registry = ops
    result = await dispatch_call(registry, "ops__fail_loudly", policy=FULL, confirm=_approve_all, reason="quota")
    assert result.error.kind is ErrorKind.EXCEPTION
    assert "the MCP server 'ops' reports an error:" in result.text
    assert "tracker refused: quota" in result.text


async def test_a_side_effect_is_refused_by_the_default_policy_and_without_an_approver(ops, environ):
    _, registry = ops
    refused = await dispatch_call(registry, "ops__add_note", service="checkout", text="paged DB team")
    assert refused.error.kind is ErrorKind.DENIED
    assert "side effects are disabled by policy (read_only)" in refused.text
    unasked = await dispatch_call(registry, "ops__add_note", policy=FULL, service="checkout", text="paged DB team")
    assert unasked.error.kind is ErrorKind.DENIED
    assert "no approver is configured" in unasked.text
    assert notes(environ) == ""


async def test_a_side_effect_runs_once_approved_and_not_when_denied(ops, environ):
    _, registry = ops
    denied = await dispatch_call(
        registry, "ops__add_note", policy=FULL, confirm=_deny_all, service="checkout", text="paged DB team"
    )
    assert denied.error.kind is ErrorKind.DENIED
    assert notes(environ) == ""
    approved = await dispatch_call(
        registry, "ops__add_note", policy=FULL, confirm=_approve_all, service="checkout", text="paged DB team"
    )
    assert approved.error is None
    assert approved.text == "note added to checkout's incident"
    assert notes(environ) == "checkout: paged DB team\n"


async def test_a_crash_mid_call_is_an_observation_and_the_next_call_works(ops):
    mcp, registry = ops
    crashed = await dispatch_call(registry, "ops__crash", policy=FULL, confirm=_approve_all)
    assert crashed.error.kind is ErrorKind.EXCEPTION
    assert "the MCP server 'ops' closed the connection during the call" in crashed.text
    assert "fatal: crash requested by the test" in crashed.text, "the server's last stderr line says why"
    assert "Whether the call took effect is unknown" in crashed.text
    after = await dispatch_call(registry, "ops__recent_incidents", service="cart", limit=1)
    assert after.text == "INC-100 cart: elevated 5xx after deploy v2.14.0"
    assert mcp.servers[0].restarts == 1


async def test_a_hang_is_cut_off_by_the_tools_timeout_and_by_the_runs_deadline(environ):
    settings = McpSettings(servers={"ops": stdio_settings(timeout_s=0.5)})
    async with McpConnections(settings, environ) as mcp:
        registry = ToolRegistry(mcp.tools())
        timed_out = await dispatch_call(registry, "ops__hang", policy=FULL, confirm=_approve_all, seconds=60)
        assert timed_out.error.kind is ErrorKind.TIMEOUT
        assert "'ops__hang' timed out after 0.5 s" in timed_out.text
        control = RunControl()
        control.start(0.2)
        cut = await dispatch_call(registry, "ops__hang", policy=FULL, confirm=_approve_all, control=control, seconds=60)
        assert cut.error.kind is ErrorKind.TIMEOUT
        assert "because the run's deadline is near" in cut.text
        after = await dispatch_call(registry, "ops__recent_incidents", service="cart", limit=1)
        assert after.error is None, "the hung calls did not take the server down"


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (stdio_settings("--fail-start"), "did not start: it exited during start-up; its last stderr line: error: TRACKER_URL is not set"),
        (McpServerSettings(command="/nonexistent/tracker-mcp"), "did not start: command not found: /nonexistent/tracker-mcp"),
        (McpServerSettings(command="sleep", args=["30"], start_timeout_s=0.5), "did not start: no answer within start_timeout_s = 0.5 s"),
        (McpServerSettings(command=sys.executable, args=["-c", GARBAGE], start_timeout_s=1), "did not start: it sent something that is not MCP JSON-RPC"),
        (stdio_settings(env=["TRACKER_API_KEY"]), "did not start: TRACKER_API_KEY not set in the environment"),
    ],
    ids=["exits", "no-such-command", "hangs", "garbage", "missing-secret"],
)  # fmt: skip
async def test_a_server_that_fails_to_start_is_one_line_and_no_tools(environ, settings, expected):
    servers = {"broken": settings, "ops": stdio_settings()}
    async with McpConnections(McpSettings(servers=servers), environ) as mcp:
        broken, ops = mcp.report()
        assert not broken.ok
        assert broken.name == "mcp broken"
        assert expected in broken.message
        assert "\n" not in broken.message
        assert ops.ok, "the other server started all the same"
        assert not [tool for tool in mcp.tools() if tool.name.startswith("broken__")]


async def test_a_read_only_name_the_server_does_not_list_fails_the_check(environ):
    settings = McpSettings(servers={"ops": stdio_settings(read_only=["recent_incident"])})
    async with McpConnections(settings, environ) as mcp:
        (report,) = mcp.report()
    assert not report.ok
    assert "read_only names tools the server does not list: recent_incident" in report.message


async def _approve_all(request):
    return Approved(by="U0ALICE", args_hash=request.args_hash)


async def _deny_all(request):
    return Denied(by="U0ALICE", reason="not now")


async def test_the_stderr_tail_has_read_everything_written_once_settled():
    """A crash's message names the server's last stderr line: it was written a moment before the connection closed,
    and the thread that reads the pipe may not have run since. Once settled, every line written so far is read."""
    tail = StderrTail()
    try:
        for n in range(2000):
            tail.writer.write(f"line {n}\n")
        tail.writer.write("fatal: out of file descriptors")  # the last words, without a newline
        tail.writer.flush()
        await tail.settled(within_s=10)
        assert tail.last() == "fatal: out of file descriptors"
        tail.writer.write("\n\n")
        tail.writer.flush()
        await tail.settled(within_s=10)
        assert tail.last() == "fatal: out of file descriptors", "empty lines are not last words"
    finally:
        tail.close()
