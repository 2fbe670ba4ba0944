"""The demo is a starting point: `--keep DIR` leaves backends and an opsagent.toml that every command works on, and
a trace replayed on the same code is identical (the tools' clock is the one the run had)."""

from __future__ import annotations

import asyncio
import json
import signal
from datetime import UTC, datetime, timedelta

from opsagent_process import environment, opsagent, start

from bot.cli.replay import replay_trace
from bot.settings import load_settings
from kernel import Agent, RunResult, ScriptedModel, text_turn
from opsagent_tools.demo_incident import write_demo_incident
from opsagent_tools.toolset import build_tools
from samples.demo_config import write_demo_config


async def test_the_kept_demo_works_with_every_command(tmp_path):
    kept = tmp_path / "demo"
    demo = await opsagent("demo", "--keep", kept, cwd=tmp_path)
    assert demo.code == 0, demo
    config = kept / "opsagent.toml"
    [trace] = (kept / "traces").glob("*.json")
    assert f"trace saved: {trace}" in demo.out
    assert f"opsagent --config {config} investigate --scripted" in demo.out

    call = await opsagent(
        "--config", config, "tools", "call", "query_metrics", "--args", '{"service": "order-service"}', cwd=tmp_path
    )
    assert call.code == 0, call
    assert call.out.startswith("order-service http_5xx_rate over the last 30m: jumped from 0.10% to 12.0% at t-9m")

    preview = await opsagent(
        "--config", config, "tools", "call", "rollback_deployment",
        "--args", '{"service": "order-service", "to_version": "v2.13.2"}', cwd=tmp_path,
    )  # fmt: skip
    assert preview.code == 0, preview
    assert preview.out.startswith("[DryRun]"), "the kept policy previews actions; no signing secret is needed"

    scripted = await opsagent("--config", config, "investigate", "--scripted", cwd=tmp_path)
    assert scripted.code == 0, scripted
    assert "■ finished" in scripted.out

    replay = await opsagent("--config", config, "replay", trace, "--json", cwd=tmp_path)
    assert replay.code == 0, replay.out
    report = json.loads(replay.out)
    assert report["divergences"] == []
    assert [step["status"] for step in report["steps"]] == ["same"] * 6 + ["dry_run", "same"]

    stats = await opsagent("stats", kept / "traces", cwd=tmp_path)
    assert stats.code == 0
    assert "runs: 1" in stats.out
    assert "success: 1/1 (100.0%)" in stats.out


async def test_a_relative_keep_directory_works_from_anywhere(tmp_path):
    """`--keep demo` from the shell's directory: the kept configuration names the files by absolute paths."""
    demo = await opsagent("demo", "--keep", "demo", cwd=tmp_path)
    assert demo.code == 0, demo
    config = tmp_path / "demo" / "opsagent.toml"
    assert f"opsagent --config {config} investigate --scripted" in demo.out
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    call = await opsagent(
        "--config", config, "tools", "call", "query_metrics", "--args", '{"service": "order-service"}', cwd=elsewhere
    )
    assert call.code == 0, call
    assert "jumped from 0.10% to 12.0%" in call.out


async def test_keep_refuses_a_directory_with_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    ran = await opsagent("demo", "--keep", tmp_path, cwd=tmp_path)
    assert ran.code == 2
    assert ran.err == f"opsagent: --keep {tmp_path}: choose a new or empty directory (this one is not empty)\n"
    assert (tmp_path / "notes.txt").read_text() == "mine"


async def test_a_replay_runs_the_tools_at_the_recorded_time(tmp_path):
    """A run two hours ago on live backends: its time-relative observations ("t-9m", the log window) replay the
    same today, because the replay's tools read the recorded turns' clock, not the wall clock."""
    then = datetime.now(UTC) - timedelta(hours=2)
    config = write_demo_config(tmp_path, then)
    settings = load_settings(config)
    turns = [
        text_turn("query_metrics", "The 5xx rate.", service="order-service", metric="http_5xx_rate"),
        text_turn("search_logs", "Who returns them?", service="gateway", since="15m"),
        text_turn("finish", answer="The gateway relays order-service's 5xx (steps 1-2)."),
    ]
    agent = Agent(llm=ScriptedModel(turns), tools=build_tools(settings.tools, now=lambda: then))
    recorded = await agent.run("order-service 5xx?")
    for turn in recorded.turns:  # as if the model had been asked then
        turn.started_at = then
        turn.ms = 0.0
    trace = RunResult.from_json(recorded.to_json())
    assert "jumped from 0.10% to 12.0% at t-9m" in trace.steps[0].observation
    report = await replay_trace(trace, settings)
    assert report.divergences == []


def test_the_demo_investigation_reads_the_same_whenever_it_runs(tmp_path):
    """The demo's backends are a recording: their tools' "now" is where it ends, not the wall clock."""
    then = datetime.now(UTC) - timedelta(days=3)
    tools = build_tools(
        write_demo_incident(tmp_path, then, action_url="http://127.0.0.1:9/a"), environ={"X": "1"}, previews_only=True
    )
    model = ScriptedModel([text_turn("query_metrics", "", service="order-service"), text_turn("finish", answer="a")])
    result = asyncio.run(Agent(llm=model, tools=tools).run("5xx?"))
    assert "jumped from 0.10% to 12.0% at t-9m" in result.steps[0].observation


async def test_a_demo_that_fails_leaves_no_half_written_directory(tmp_path):
    """Without git the demo cannot build its repository: it says so, and the directories --keep made are gone."""
    no_git = tmp_path / "bin"
    no_git.mkdir()
    env = environment(PATH=str(no_git))
    made = await opsagent("demo", "--keep", "runs/demo", cwd=tmp_path, env=env)
    assert made.code == 2
    assert made.err == "opsagent: the demo builds a git repository with git, which is not installed: install git\n"
    assert not (tmp_path / "runs").exists(), "the directories --keep made are removed"
    empty = tmp_path / "mine"
    empty.mkdir()
    given = await opsagent("demo", "--keep", "mine", cwd=tmp_path, env=env)
    assert given.code == 2
    assert empty.is_dir(), "a directory the person made is theirs: emptied, kept"
    assert list(empty.iterdir()) == []


async def test_the_kept_cluster_answers_the_kubernetes_tools_while_it_is_served(tmp_path):
    """`demo --keep` records the cluster and writes a kubeconfig for it; `demo --serve-kubernetes DIR` serves it
    until Ctrl-C, and the kept opsagent.toml's Kubernetes tools read it as a real cluster."""
    demo = await opsagent("demo", "--keep", "demo", cwd=tmp_path)
    assert demo.code == 0, demo
    config = tmp_path / "demo" / "opsagent.toml"
    pods = ("tools", "call", "k8s_pods", "--args", '{"workload": "order-service"}')
    assert f'opsagent --config {config} tools call k8s_pods --args \'{{"workload": "order-service"}}\'' in demo.out
    unserved = await opsagent("--config", config, *pods, cwd=tmp_path)
    assert unserved.code == 1
    assert "Cannot reach the Kubernetes API server at http://127.0.0.1:" in unserved.out

    server = await start("demo", "--serve-kubernetes", "demo", cwd=tmp_path)
    assert server.stdout is not None
    async with asyncio.timeout(30):
        serving = (await server.stdout.readline()).decode()
    assert serving.startswith("serving the demo's cluster at http://127.0.0.1:")
    try:
        served = await opsagent("--config", config, *pods, cwd=tmp_path)
        events = await opsagent(
            "--config", config, "tools", "call", "k8s_events", "--args", '{"reason": "BackOff"}', cwd=tmp_path
        )
    finally:
        server.send_signal(signal.SIGINT)
        async with asyncio.timeout(30):
            out, _ = await server.communicate()
    assert served.code == 0, served
    assert "3 pods: 2 CrashLoopBackOff, 1 Running; 8 restarts" in served.out
    assert "Warning BackOff pod/order-service-7d9f8b6c4-m8wzt ×11" in events.out
    assert server.returncode == 0
    assert out.decode().endswith("stopped serving the demo's cluster\n")


async def test_serving_a_directory_without_a_kept_cluster_says_how_to_make_one(tmp_path):
    ran = await opsagent("demo", "--serve-kubernetes", "nowhere", cwd=tmp_path)
    assert ran.code == 2
    assert ran.err == (
        f"opsagent: --serve-kubernetes {tmp_path / 'nowhere'}: no demo cluster is kept there: keep one first with "
        f"opsagent demo --keep {tmp_path / 'nowhere'}\n"
    )
