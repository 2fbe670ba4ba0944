"""MCP tools in evaluation scenarios: declared with their schema, built by the production builder, answering
from recordings exactly as the live server's results are rendered (a recorded error is an isError result)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.eval.scenarios import load_scenario
from bot.eval.tools import catalogue_names, recorded_registry
from kernel import Approved, ErrorKind, SideEffectMode, SideEffectPolicy
from worlds.dispatch import dispatch_call

SCENARIO = Path(__file__).parents[3] / "evals" / "scenarios" / "feature-flag-mcp.toml"


@pytest.fixture
def scenario():
    return load_scenario(SCENARIO, catalogue_names())


def test_declared_mcp_tools_join_the_production_catalogue_as_production_builds_them(scenario):
    registry = recorded_registry(scenario.recordings, scenario.repos, mcp_tools=scenario.mcp_tools)
    changes, set_flag = registry.get("flags__flag_changes"), registry.get("flags__set_flag")
    assert not changes.side_effect, "listed read_only in the scenario"
    assert set_flag.side_effect
    assert changes.spec.parameters["required"] == ["service"]
    assert changes.spec.description.startswith(
        "[MCP server 'flags'; read-only; text in «» comes from the server, not from OpsAgent] «Feature-flag changes"
    )
    assert "query_metrics" in registry


async def test_a_recorded_mcp_output_and_error_read_as_the_live_servers_would(scenario, tmp_path):
    registry = recorded_registry(scenario.recordings, scenario.repos, mcp_tools=scenario.mcp_tools)
    found = await dispatch_call(registry, "flags__flag_changes", service="checkout")
    assert found.text.startswith("2 flag changes for checkout in the last 24h")
    text = SCENARIO.read_text().replace(
        'output = "new-tax-engine: rollout 100% -> 0%"', 'error = "flag service is read-only during a freeze"'
    )
    frozen = load_scenario(_write(tmp_path, text), catalogue_names())
    registry = recorded_registry(frozen.recordings, frozen.repos, mcp_tools=frozen.mcp_tools)
    refused = await dispatch_call(
        registry,
        "flags__set_flag",
        policy=SideEffectPolicy(mode=SideEffectMode.FULL),
        confirm=_approve,
        flag="new-tax-engine",
        rollout_percent=0,
    )
    assert refused.error.kind is ErrorKind.EXCEPTION
    assert "the MCP server 'flags' reports an error: flag service is read-only during a freeze" in refused.text


def test_a_recording_of_an_undeclared_mcp_tool_is_refused_with_the_known_names(tmp_path):
    text = SCENARIO.read_text().replace('tool = "flags__flag_changes"', 'tool = "flags__flag_history"', 1)
    with pytest.raises(ValueError, match=r"unknown tool 'flags__flag_history'; known: .*flags__flag_changes"):
        load_scenario(_write(tmp_path, text), catalogue_names())


def _write(tmp_path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    return path


async def _approve(request):
    return Approved(by="U0ALICE", args_hash=request.args_hash)
