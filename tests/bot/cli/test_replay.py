"""`opsagent replay`: recorded model turns re-run on today's kernel and tools, divergences named per step."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli.demo import DemoDeploymentWebhook
from bot.cli.main import main
from bot.cli.replay import ReplayModel, StepStatus, compare_step
from bot.settings import load_settings
from kernel import (
    Agent,
    ApprovalRequest,
    Approved,
    ChatRequest,
    Deferred,
    Guidance,
    LLMError,
    RunControl,
    RunFinished,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    Step,
    StepCompleted,
    StopReason,
    ToolCall,
    native_turn,
    text_turn,
)
from opsagent_tools.toolset import build_tools
from samples.demo_config import write_demo_config

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "traces"
TASK = "order-service 5xx since the v2.14.0 deploy: what changed?"
ROLLBACK = {"service": "order-service", "to_version": "v2.13.2"}
ACTIONS = '[tools.actions.webhook]\nurl = "{url}"\n'


def script(*, rollback: bool = False) -> list:
    """Turns over the time-independent tools (git, argument checks), so a replay matches exactly."""
    turns = [
        native_turn(
            ("compare_refs", {"base": "v2.13.2", "head": "v2.14.0"}),
            ("read_repo_file", {"path": "config/database.yaml", "ref": "v2.14.0"}),
            text="What changed in the deploy, and the pool settings it shipped.",
        ),
        text_turn("read_repo_file", "And the pgbouncer config?", path="config/pgbouncer.ini", ref="v2.14.0"),
        text_turn("query_metrics", "The 5xx rate."),
    ]
    if rollback:
        turns.append(text_turn("rollback_deployment", "v2.14.0 cut the pool.", **ROLLBACK))
    turns.append(text_turn("finish", answer="v2.14.0 cut the database pool from 50 to 10 (steps 1-2)."))
    return turns


async def record(config: Path, turns: list, *, policy: SideEffectPolicy | None = None, confirm=None):
    """Run the agent in-process on the configured tools, as `opsagent investigate` would, for a trace."""
    settings = load_settings(config)
    agent = Agent(
        llm=ScriptedModel(turns),
        tools=build_tools(settings.tools),
        budget=settings.budget,
        policy=policy or settings.policy,
        confirm=confirm,
        context=settings.context,
    )
    return await agent.run(TASK)


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def replay_json(capsys, config: Path, trace: Path) -> tuple[int, dict]:
    code, out, _ = cli(capsys, "--config", config, "replay", trace, "--json")
    return code, json.loads(out)


@pytest.fixture
def recorded(tmp_path, demo_config):
    """A fresh trace over the demo backends, saved where the replay reads it."""
    result = asyncio.run(record(demo_config, script()))
    assert result.ok
    assert [s.error for s in result.steps] == [None, None, "exception", "bad_args", None]
    path = tmp_path / "trace.json"
    path.write_text(result.to_json())
    return path


def tamper(path: Path, change) -> Path:
    data = json.loads(path.read_text())
    change(data)
    out = path.with_name("tampered.json")
    out.write_text(json.dumps(data))
    return out


def test_a_fresh_trace_replays_without_divergence(capsys, demo_config, recorded):
    code, out, _ = cli(capsys, "--config", demo_config, "replay", recorded)
    assert code == 0, out
    assert "side effects were forced to dry_run for the replay: none was executed" in out
    rows = [line.split() for line in out.splitlines() if line[:4].strip().isdigit()]
    assert [(row[0], row[1]) for row in rows] == [(str(i), "same") for i in range(1, 6)]
    assert "✓ same stop: finish" in out
    assert out.rstrip().endswith("result: no divergence")


def test_a_turn_of_reads_run_in_parallel_replays_without_divergence(capsys, demo_config, tmp_path):
    """Three reads of one turn, one of them failing, run at once: the trace keeps the model's order, so a replay
    (where they run at once again and may finish in another order) compares step for step."""
    reads = native_turn(
        ("compare_refs", {"base": "v2.13.2", "head": "v2.14.0"}),
        ("read_repo_file", {"path": "config/pgbouncer.ini", "ref": "v2.14.0"}),
        ("read_repo_file", {"path": "config/database.yaml", "ref": "v2.14.0"}),
        text="The deploy's diff and both pool configs, at once.",
    )
    finish = text_turn("finish", answer="v2.14.0 cut the database pool from 50 to 10 (steps 1 and 3).")
    result = asyncio.run(record(demo_config, [reads, finish]))
    assert [(s.call.name, s.error) for s in result.steps if s.call] == [
        ("compare_refs", None),
        ("read_repo_file", "exception"),
        ("read_repo_file", None),
        ("finish", None),
    ]
    path = tmp_path / "parallel.json"
    path.write_text(result.to_json())
    code, report = replay_json(capsys, demo_config, path)
    assert code == 0
    assert (report["divergent"], report["divergences"]) == (False, [])
    assert [s["status"] for s in report["steps"]] == ["same"] * 4


def test_the_json_report_compares_every_step_and_the_stop(capsys, demo_config, recorded):
    code, report = replay_json(capsys, demo_config, recorded)
    assert code == 0
    assert report["divergent"] is False
    assert report["divergences"] == []
    assert report["policy"] == "dry_run"
    assert [s["status"] for s in report["steps"]] == ["same"] * 5
    assert report["steps"][2]["recorded_error"] == report["steps"][2]["replayed_error"] == "exception"
    assert report["steps"][0]["recorded_call"] == 'compare_refs(base="v2.13.2", head="v2.14.0")'
    assert report["turns"] == {"recorded": 4, "used": 4, "needed": None}
    assert report["stop"] == {
        "recorded": "finish",
        "replayed": "finish",
        "recorded_ok": True,
        "replayed_ok": True,
        "diverges": False,
        "note": "same stop: finish",
    }


def test_a_changed_observation_is_a_divergence_with_a_diff(capsys, demo_config, recorded):
    def edit(data):
        data["steps"][1]["observation"] = data["steps"][1]["observation"].replace("max_size", "max_pool")

    trace = tamper(recorded, edit)
    code, out, _ = cli(capsys, "--config", demo_config, "replay", trace)
    assert code == 1
    assert any(line.split()[:2] == ["2", "changed"] for line in out.splitlines() if line.strip())
    assert any(line.strip().startswith("-") and "max_pool" in line for line in out.splitlines())
    assert any(line.strip().startswith("+") and "max_size" in line for line in out.splitlines())
    assert out.rstrip().endswith("result: 1 divergence")

    code, report = replay_json(capsys, demo_config, trace)
    step = report["steps"][1]
    assert (code, step["status"]) == (1, "changed")
    assert 0.8 < step["similarity"] < 1
    assert report["divergences"] == [f"step 2: changed ({step['note']})"]


def test_what_each_turn_offered_is_recorded_and_a_changed_offer_is_a_divergence(capsys, demo_config, recorded):
    offered = json.loads(recorded.read_text())["offered"]
    assert len(offered) == 4, "one entry per turn"
    assert all(offered), "each turn offered some tools in full"
    swapped = "query_metrics" if "query_metrics" not in offered[0] else "search_logs"
    trace = tamper(recorded, lambda data: data["offered"][0].__setitem__(0, swapped))
    code, report = replay_json(capsys, demo_config, trace)
    assert code == 1
    assert report["divergent"] is True
    assert f"turn 1 offered other tools in full (without {swapped}; with " in report["stop"]["note"]


def test_a_changed_error_kind_is_named(capsys, demo_config, recorded):
    trace = tamper(recorded, lambda data: data["steps"][2].update(error="timeout"))
    code, report = replay_json(capsys, demo_config, trace)
    assert code == 1
    assert report["steps"][2]["status"] == "error_changed"
    assert report["divergences"] == ["step 3: error_changed (timeout → exception)"]


def test_a_run_that_needs_more_turns_than_recorded_ends_with_a_clear_divergence(capsys, demo_config, recorded):
    trace = tamper(recorded, lambda data: data["turns"].pop())  # the finish turn is gone, its step stays
    code, report = replay_json(capsys, demo_config, trace)
    assert code == 1
    assert report["turns"] == {"recorded": 3, "used": 3, "needed": 4}
    assert [s["status"] for s in report["steps"]] == ["same", "same", "same", "same", "missing"]
    assert report["stop"]["replayed"] == "llm_error"
    assert report["stop"]["replayed_ok"] is False
    assert report["stop"]["note"] == "the run needed turn 4, the trace has 3 (recorded stop: finish)"
    assert report["divergences"][-1] == report["stop"]["note"]


def test_a_dropped_middle_turn_shifts_the_calls(capsys, demo_config, recorded):
    trace = tamper(recorded, lambda data: data["turns"].pop(1))
    code, report = replay_json(capsys, demo_config, trace)
    statuses = [s["status"] for s in report["steps"]]
    assert code == 1
    assert statuses == ["same", "same", "call_changed", "call_changed", "missing"]
    assert report["steps"][2]["replayed_call"] == "query_metrics()"
    assert report["stop"]["diverges"] is False, "both runs finished; the steps carry the divergence"


async def test_a_side_effect_is_replayed_as_a_dry_run_and_nothing_is_sent(capsys, tmp_path, monkeypatch):
    async with DemoDeploymentWebhook() as webhook:
        monkeypatch.setenv("OPSAGENT_ACTION_SECRET", webhook.secret)
        config = write_demo_config(tmp_path, datetime.now(UTC), extra=ACTIONS.format(url=webhook.url))

        async def approve(request: ApprovalRequest) -> Approved:
            return Approved(by="alice", args_hash=request.args_hash)

        result = await record(config, script(rollback=True), policy=SideEffectPolicy(mode="full"), confirm=approve)
        assert result.ok
        assert len(webhook.received) == 1, "the recorded run did roll back"
        trace = tmp_path / "trace.json"
        trace.write_text(result.to_json())

        code, out, _ = await asyncio.to_thread(cli, capsys, "--config", config, "replay", trace, "--json")
        assert len(webhook.received) == 1, "the replay sent nothing"
    report = json.loads(out)
    rollback = report["steps"][4]
    assert code == 0
    assert rollback["status"] == "dry_run"
    assert (
        rollback["recorded_call"]
        == rollback["replayed_call"]
        == ('rollback_deployment(service="order-service", to_version="v2.13.2")')
    )
    assert rollback["note"] == "side effect not executed in the replay; recorded: approved by alice"
    assert report["notes"] == ["side effects were forced to dry_run for the replay: none was executed"]


def test_a_run_paused_for_approval_replays_up_to_the_pause(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OPSAGENT_ACTION_SECRET", "k")
    config = write_demo_config(tmp_path, datetime.now(UTC), extra=ACTIONS.format(url="http://127.0.0.1:9/x"))

    async def defer(request: ApprovalRequest) -> Deferred:
        return Deferred(approval_id="apr-1")

    result = asyncio.run(
        record(config, script(rollback=True)[:-1], policy=SideEffectPolicy(mode="full"), confirm=defer)
    )
    assert result.stop_reason is StopReason.AWAITING_APPROVAL
    trace = tmp_path / "trace.json"
    trace.write_text(result.to_json())

    code, report = replay_json(capsys, config, trace)
    assert code == 0
    assert report["steps"][4]["status"] == "dry_run"
    assert report["steps"][4]["note"].endswith("recorded: pending approval")
    assert report["turns"] == {"recorded": 4, "used": 4, "needed": 5}
    assert report["stop"]["diverges"] is False
    assert "where the recorded run stopped (awaiting_approval)" in report["stop"]["note"]


def test_the_shipped_v1_demo_trace_replays_and_shows_what_changed_since(capsys, demo_config):
    code, report = replay_json(capsys, demo_config, FIXTURES / "v1_demo_text_protocol.json")
    assert code == 1, "recorded with older canned tools: the observations differ"
    assert report["steps"][0]["status"] == "changed"
    assert report["steps"][-1]["status"] == "same", "the same finish"
    assert report["steps"][4]["status"] == "error_changed", "no [tools.actions]: rollback_deployment is unknown"
    assert report["stop"]["note"] == "same stop: finish"


def test_a_file_that_is_not_a_trace_is_refused_by_name(capsys, demo_config, tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"hello": "world"}')
    code, _, err = cli(capsys, "--config", demo_config, "replay", path)
    assert code == 2
    assert f"{path} is not an OpsAgent trace: it has no integer schema_version" in err


async def test_the_replay_model_plays_the_turns_then_fails_as_a_model_error():
    model = ReplayModel([native_turn(("finish", {"answer": "a"}))], model="m")
    request = ChatRequest(instructions="", tools=(), messages=())
    assert (await model.complete(request)).tool_calls[0].name == "finish"
    with pytest.raises(LLMError, match="the run needed model turn 2, the trace has 1"):
        await model.complete(request)
    assert model.exhausted_at == 2


def test_steps_only_on_one_side_are_missing_or_extra():
    step = Step(index=1, turn=0, call=ToolCall(name="query_metrics", args={"service": "a"}), observation="x")
    assert compare_step(1, step, None).status is StepStatus.MISSING
    assert compare_step(1, None, step).status is StepStatus.EXTRA
    assert compare_step(1, step, step).status is StepStatus.SAME
    native = Step(index=1, turn=0, call=ToolCall(name="query_metrics", args={"service": "a"}, id="c1"), observation="x")
    assert compare_step(1, step, native).status is StepStatus.SAME, "native call ids are not behaviour"


def test_a_dry_run_recording_compares_exactly(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OPSAGENT_ACTION_SECRET", "k")
    config = write_demo_config(tmp_path, datetime.now(UTC), extra=ACTIONS.format(url="http://127.0.0.1:9/x"))
    policy = SideEffectPolicy(mode=SideEffectMode.DRY_RUN)
    result = asyncio.run(record(config, script(rollback=True), policy=policy))
    assert result.steps[4].observation.startswith("[DryRun]")
    trace = tmp_path / "trace.json"
    trace.write_text(result.to_json())
    code, report = replay_json(capsys, config, trace)
    assert code == 0
    assert report["steps"][4]["status"] == "same", "the same preview: same run id, same step"

    edited = tamper(trace, lambda data: data["steps"][4].update(observation="[DryRun] Not executed. Would do: x"))
    code, report = replay_json(capsys, config, edited)
    assert (code, report["steps"][4]["status"]) == (1, "changed"), "a recorded preview is compared as text"


def test_a_run_given_guidance_replays_it_before_the_same_turn(capsys, demo_config, tmp_path):
    """Guidance a person gave mid-run is in the trace with the turn that took it; the replay gives it back there,
    so the conversation (and every step after it) is the same."""
    guidance = Guidance(
        "Maria", "the pool shrank in the deploy, check the config", datetime(2026, 12, 5, 14, 7, tzinfo=UTC)
    )

    async def guided_run():
        settings = load_settings(demo_config)
        control, agent = RunControl(), Agent(llm=ScriptedModel(script()), tools=build_tools(settings.tools))
        async for event in agent.events(TASK, control=control):
            if isinstance(event, StepCompleted) and event.step.index == 2:
                control.guide(guidance)
            if isinstance(event, RunFinished):
                return event.result
        raise AssertionError("no RunFinished")

    result = asyncio.run(guided_run())
    assert [(t.turn, t.step) for t in result.guidance] == [(1, 3)]
    path = tmp_path / "guided.json"
    path.write_text(result.to_json())
    code, report = replay_json(capsys, demo_config, path)
    assert (code, report["divergent"], report["divergences"]) == (0, False, [])
    moved = tamper(path, lambda data: data["guidance"][0].update(turn=2))
    code, report = replay_json(capsys, demo_config, moved)
    assert report["divergent"] is True
    assert "the guidance was taken at other steps" in report["stop"]["note"]
