"""The `opsagent` command line as operators use it: tools list/call, check, investigate."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import UTC, datetime

from opsagent_process import environment, opsagent

from bot.cli.main import main
from opsagent_tools.metrics import MetricsSettings
from opsagent_tools.metrics.tools import metrics_tools
from samples.demo_config import write_demo_config
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_tool_call
from testkit.model_words import model_directed
from testkit.servers.local_server import free_port


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_tools_list_shows_every_configured_tool(capsys, demo_config):
    code, out, _ = cli(capsys, "--config", demo_config, "tools", "list")
    assert code == 0
    for name in ("query_metrics", "list_metrics", "search_logs", "read_repo_file", "compare_refs", "\n"):
        assert name in out
    assert "rollback_deployment" not in out, "no [tools.actions] section, no side-effect tools"
    (query,) = [
        tool for tool in metrics_tools(MetricsSettings(url="http://127.0.0.1:9")) if tool.name == "query_metrics"
    ]
    assert query.summary in out, "each tool says what it does in a person's words"
    assert query.spec.description.splitlines()[0] not in out, "not in the model's description"
    assert "arguments: service (required), metric, window, step" in out


def test_tools_list_json_is_the_model_facing_specs(capsys, demo_config):
    code, out, _ = cli(capsys, "--config", demo_config, "tools", "list", "--json")
    specs = {spec["name"]: spec for spec in json.loads(out)}
    assert code == 0
    assert specs["query_metrics"]["parameters"]["required"] == ["service"]


def test_tools_call_prints_the_observation_the_model_would_see(capsys, demo_config):
    args = json.dumps({"service": "order-service", "metric": "http_5xx_rate", "window": "30m"})
    code, out, _ = cli(capsys, "--config", demo_config, "tools", "call", "query_metrics", "--args", args)
    assert code == 0
    assert out.startswith("order-service http_5xx_rate over the last 30m: jumped from 0.10% to 12.0% at t-")
    assert 'query: http_requests_5xx_ratio{service="order-service"}' in out


def test_tools_call_against_a_real_prometheus(capsys, tmp_path, prometheus):
    config = tmp_path / "opsagent.toml"
    config.write_text(f'[tools.metrics]\nurl = "{prometheus.url}"\n')
    args = json.dumps({"service": "order-service", "metric": "http_5xx_rate", "window": "30m"})
    code, out, _ = cli(capsys, "--config", config, "tools", "call", "query_metrics", "--args", args)
    assert code == 0
    assert "jumped from 0.10% to 12.0%" in out
    assert 'http_requests_total{service="order-service",code=~"5.."}' in out


def test_tools_call_unknown_tool_lists_the_available_ones(capsys, demo_config):
    code, out, _ = cli(capsys, "--config", demo_config, "tools", "call", "get_metrics")
    assert code == 1
    assert out.startswith("Unknown tool 'get_metrics'. Available tools: 'query_metrics',"), "a person's words"
    assert model_directed(out) == [], "not the model's hint (call one of these, or finish)"


def test_tools_call_with_bad_json_says_how_to_fix_it(capsys, demo_config):
    code, _, err = cli(capsys, "--config", demo_config, "tools", "call", "query_metrics", "--args", "{service:")
    assert code == 2
    assert "--args is not valid JSON" in err


def test_side_effects_are_refused_under_the_default_policy(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OPSAGENT_ACTION_SECRET", "k")
    config = write_demo_config(
        tmp_path, datetime.now(UTC), extra='[tools.actions.webhook]\nurl = "http://127.0.0.1:9/x"\n'
    )
    args = json.dumps({"service": "order-service", "to_version": "v2.13.2"})
    code, out, _ = cli(capsys, "--config", config, "tools", "call", "rollback_deployment", "--args", args)
    assert code == 1
    assert "side effects are disabled by policy (read_only)" in out
    assert model_directed(out) == [], "not the model's hint (use a read-only tool, or ask the user)"


def test_check_reaches_every_backend(capsys, demo_config):
    code, out, _ = cli(capsys, "--config", demo_config, "check")
    assert code == 0
    assert "✓ metrics: reachable; 3 services: gateway, order-service, payment-service" in out
    assert "✓ logs (files): reachable" in out
    assert "✓ repo order-service: readable at HEAD" in out


def test_check_names_the_backend_that_fails(capsys, tmp_path):
    config = tmp_path / "opsagent.toml"
    config.write_text('[tools.metrics]\nurl = "http://127.0.0.1:9"\n')
    code, out, _ = cli(capsys, "--config", config, "check")
    assert code == 1
    assert "✗ metrics: cannot reach Prometheus at http://127.0.0.1:9" in out


def test_a_missing_configuration_file_is_named(capsys, tmp_path):
    code, _, err = cli(capsys, "--config", tmp_path / "nope.toml", "check")
    assert code == 2
    assert "nope.toml does not exist" in err


def test_an_invalid_configuration_says_which_key(capsys, tmp_path):
    config = tmp_path / "opsagent.toml"
    config.write_text('[policy]\nmode = "yolo"\n')
    code, _, err = cli(capsys, "--config", config, "check")
    assert code == 2
    assert f"{config}: [policy] mode = \"yolo\": should be 'read_only'" in err


def test_investigate_without_a_model_says_how_to_configure_one(capsys, demo_config, monkeypatch):
    for name in ("OPSAGENT_LLM_MODEL", "OPSAGENT_LLM_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, _, err = cli(capsys, "--config", demo_config, "investigate", "why 5xx?")
    assert code == 2
    assert "no model is configured" in err


async def test_a_blank_task_is_refused_like_an_empty_one(tmp_path):
    """`investigate "   "` is no task: refused before the model is asked anything, as `investigate ""` is."""
    async with FakeModelServer() as server:
        env = environment(OPSAGENT_LLM_BASE_URL=f"{server.url}/v1", OPSAGENT_LLM_MODEL="fake-gpt")
        blank = await opsagent("investigate", "   ", cwd=tmp_path, env=env)
        empty = await opsagent("investigate", "", cwd=tmp_path, env=env)
    said = 'opsagent: say what to investigate: opsagent investigate "order-service 5xx jumped to 12%"\n'
    assert (blank.code, blank.err) == (2, said)
    assert (empty.code, empty.err) == (2, said)
    assert server.requests == [], "the model was never asked"


async def test_investigate_runs_the_agent_on_an_openai_compatible_endpoint(tmp_path):
    config = write_demo_config(tmp_path, datetime.now(UTC))
    trace = tmp_path / "trace.json"
    async with FakeModelServer() as server:
        server.script(
            Reply(
                openai_completion(
                    None,
                    tool_calls=[
                        openai_tool_call("c1", "query_metrics", {"service": "order-service", "metric": "http_5xx_rate"})
                    ],
                )
            ),
            Reply(
                openai_completion(
                    None,
                    tool_calls=[
                        openai_tool_call("c2", "finish", {"answer": "order-service 5xx jumped at t-9m (step 1)."})
                    ],
                )
            ),
        )
        env = {
            **os.environ,
            "OPSAGENT_LLM_BASE_URL": server.url,
            "OPSAGENT_LLM_MODEL": "fake-gpt",
            "OPSAGENT_LLM_API_KEY": "sk-test",
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot.cli.main",
            "--config",
            str(config),
            "investigate",
            "order-service 5xx?",
            "--trace",
            str(trace),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
        )
        out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert "✓ step 1" in text
    assert "jumped from 0.10% to 12.0%" in text
    assert "■ finished" in text
    saved = json.loads(trace.read_text())
    assert saved["ok"] is True
    assert saved["steps"][0]["call"]["name"] == "query_metrics"
    first = server.bodies[0]
    assert {tool["function"]["name"] for tool in first["tools"]} >= {"query_metrics", "search_logs", "finish"}
    assert first["messages"][-1]["content"].startswith("Task: order-service 5xx?")


def test_serve_says_plainly_when_the_run_store_cannot_be_reached(capsys, demo_config, monkeypatch):
    monkeypatch.setenv("OPSAGENT_STORE__URL", f"postgresql://opsagent@127.0.0.1:{free_port()}/opsagent")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "signing-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code = main(["--config", str(demo_config), "serve", "--http", "--port", str(free_port())])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("opsagent: PostgreSQL at 127.0.0.1:")
    assert "is unavailable" in err
    assert "Traceback" not in err
