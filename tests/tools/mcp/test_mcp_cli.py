"""`opsagent tools list`, `tools call` and `check` with MCP servers configured, as an operator runs them."""

from __future__ import annotations

import json
import re
import sys

import pytest

from bot.cli.main import main
from testkit.servers.mcp_harness import HOSTILE_SERVER, OPS_SERVER, TOKEN


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("OPS_TOKEN", TOKEN)
    monkeypatch.setenv("OPS_NOTES_FILE", str(tmp_path / "notes.txt"))
    path = tmp_path / "opsagent.toml"
    path.write_text(
        f"""
[tools.mcp.servers.ops]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(OPS_SERVER))}]
env = ["OPS_TOKEN", "OPS_NOTES_FILE"]
read_only = ["recent_incidents", "service_status"]

[tools.mcp.servers.broken]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(OPS_SERVER))}, "--fail-start"]
"""
    )
    return path


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_tools_list_shows_each_mcp_tools_status_and_the_untrusted_hint(capsys, config):
    code, out, err = cli(capsys, "--config", config, "tools", "list")
    assert code == 1, "a configured server did not start: its tools are missing from the list"
    assert "ops__recent_incidents [MCP server ops, tool 'recent_incidents'; read-only (listed in read_only)]" in out
    assert (
        "ops__add_note [MCP server ops, tool 'add_note'; side effect: needs approval; the server says readOnlyHint = "
        "true: not trusted; list it in read_only if it only reads]"
    ) in out
    assert "ops__crash [MCP server ops, tool 'crash'; side effect: needs approval]\n" in out
    warning, summary = err.splitlines()[-2:]
    assert warning.startswith("opsagent: mcp broken: stdio:"), "the failed server is said once, on stderr"
    assert "did not start" in warning
    assert summary == (
        "opsagent: 1 of 2 MCP servers did not start (broken): its tools are not listed; the reason is above, and "
        "`opsagent check` checks them again"
    )


def test_tools_list_with_every_server_down_says_which_failed_not_that_none_is_configured(capsys, tmp_path):
    config = tmp_path / "opsagent.toml"
    config.write_text(
        f"""
[tools.mcp.servers.tracker]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(OPS_SERVER))}, "--fail-start"]

[tools.mcp.servers.grafana]
url = "http://127.0.0.1:9/mcp"
"""
    )
    code, out, err = cli(capsys, "--config", config, "tools", "list")
    assert code == 1
    assert out == "", "no 'no tools are configured': two are, and neither started"
    said = err.splitlines()
    assert said[0].startswith("opsagent: mcp tracker: stdio: ")
    assert "did not start: it exited during start-up" in said[0]
    assert said[1].startswith("opsagent: mcp grafana: http://127.0.0.1:9/mcp: did not start: ")
    assert said[2] == (
        "opsagent: 2 of 2 MCP servers did not start (tracker, grafana): their tools are not listed; the reason is "
        "above, and `opsagent check` checks them again"
    )


def test_tools_list_json_carries_side_effects_and_the_mcp_origin(capsys, config):
    code, out, _ = cli(capsys, "--config", config, "tools", "list", "--json")
    tools = {tool["name"]: tool for tool in json.loads(out)}
    assert code == 1, "the broken server's tools are missing"
    assert tools["ops__add_note"]["side_effect"] is True
    assert tools["ops__add_note"]["mcp"] == {"server": "ops", "tool": "add_note", "read_only_hint": True}
    assert tools["ops__recent_incidents"]["side_effect"] is False


def test_tools_call_runs_an_mcp_tool_through_dispatch(capsys, config):
    code, out, _ = cli(
        capsys,
        "--config",
        config,
        "tools",
        "call",
        "ops__recent_incidents",
        "--args",
        '{"service": "cart", "limit": 1}',
    )
    assert code == 0
    assert out == "INC-100 cart: elevated 5xx after deploy v2.14.0\n"


def test_check_reports_each_server_in_one_line(capsys, config):
    code, out, _ = cli(capsys, "--config", config, "check")
    assert code == 1, "a server did not start"
    lines = out.splitlines()
    assert any(
        line.startswith("✓ mcp ops: stdio:") and "started; 8 tools (2 read-only, 6 side effects)" in line
        for line in lines
    )
    assert any(
        line.startswith("✗ mcp broken: stdio:")
        and line.endswith(
            "did not start: it exited during start-up; its last stderr line: error: TRACKER_URL is not set"
        )
        for line in lines
    )


def test_check_and_tools_list_say_what_a_hostile_servers_listing_left_out(capsys, tmp_path):
    config = tmp_path / "hostile.toml"
    config.write_text(
        f"""
[tools.mcp.servers.hostile]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(HOSTILE_SERVER))}]
read_only = ["lookup_runbook"]
"""
    )
    code, out, _ = cli(capsys, "--config", config, "check")
    assert code == 1, "a collision is a configuration error"
    (server,) = [line for line in out.splitlines() if line.startswith(("✓ mcp", "✗ mcp"))]
    assert server.startswith("✗ mcp hostile: stdio:")
    assert "configuration error: 'deploy.status' and 'deploy_status' both become hostile__deploy_status" in server
    (warning,) = [line for line in out.splitlines() if line.startswith("⚠")]
    assert re.fullmatch(
        r"⚠ mcp hostile: left out 'bulk_lookup': its schema takes [\d,]+ bytes even trimmed, .*", warning
    )
    code, out, err = cli(capsys, "--config", config, "tools", "list")
    assert code == 0
    assert "hostile__lookup_runbook [MCP server hostile, tool 'lookup_runbook'; read-only" in out
    assert "hostile__incident_note [MCP server hostile, tool 'incident.note'; side effect: needs approval]" in out
    assert "deploy" not in out
    assert "bulk" not in out
    said = err.splitlines()
    assert any("opsagent: mcp hostile: " in line and "configuration error" in line for line in said)
    assert any(line.startswith("opsagent: mcp hostile: left out 'bulk_lookup': its schema takes") for line in said)
    exclude = config.read_text() + 'exclude = ["deploy_status", "bulk_lookup"]\n'
    config.write_text(exclude)
    code, out, _ = cli(capsys, "--config", config, "check")
    assert code == 0, out
    assert "✓ mcp hostile: stdio:" in out
    assert "2 excluded (exclude)" in out
    assert "⚠" not in out
