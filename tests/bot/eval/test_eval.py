"""`opsagent eval`: the shipped scenarios, the three scores failing when they should, loading errors, the CLI.

Failing runs are made the way a bad model would make them: strict ScriptedModel scripts through the real
kernel on the scenario's recordings, never hand-built results.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.eval.run import run_scenario, script_turns, scripted_model
from bot.eval.scenarios import Scenario, load_scenario, load_scenarios
from bot.eval.tools import catalogue_names, production_tools, recorded_registry
from kernel import FINISH_TOOL, LOAD_TOOLS_TOOL, ScriptedModel, StopReason, text_turn
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_tool_call

SCENARIOS = Path(__file__).resolve().parents[3] / "evals" / "scenarios"
REQUIRED_KINDS = (
    "bad-deploy",
    "db-pool-exhaustion",
    "memory-leak-oom",
    "certificate-expiry",
    "dependency-outage",
    "noisy-neighbour",
    "config-typo",
    "disk-full",
    "dns-failure",
    "red-herring-deploy",
    "runbook-names-the-query",
    "discover-a-label",
    "deploy-in-the-timeline",
    "past-incident-same-signature",
    "past-incident-red-herring",
)


def scenario(name: str) -> Scenario:
    return load_scenario(SCENARIOS / f"{name}.toml", catalogue_names())


def finish(answer: str) -> str:
    return text_turn(FINISH_TOOL, answer=answer)


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --- the shipped scenarios ------------------------------------------------------------------------


def test_the_required_incident_kinds_are_shipped():
    names = {s.name for s in load_scenarios(SCENARIOS, catalogue_names())}
    assert set(REQUIRED_KINDS) <= names
    assert len(names) >= 10


@pytest.mark.parametrize("name", REQUIRED_KINDS)
async def test_each_shipped_scenario_passes_with_its_script(name):
    scn = scenario(name)
    model = scripted_model(scn)
    outcome = await run_scenario(scn, model)
    assert outcome.result.stop_reason is StopReason.FINISH, outcome.result.detail
    assert outcome.passed, outcome.scores.problems()
    assert model.calls == len(scn.script), "every scripted turn is used, and no more"
    failed = [s for s in outcome.result.steps if s.error is not None]
    assert not failed, f"a scripted call had no recording: {failed[0].observation if failed else ''}"


async def test_side_effects_in_an_evaluation_are_dry_runs():
    scn = scenario("bad-deploy")
    outcome = await run_scenario(scn, scripted_model(scn))
    rollback = next(s for s in outcome.result.steps if s.call and s.call.name == "rollback_deployment")
    assert rollback.observation.startswith("[DryRun] Not executed")
    assert "evaluation.invalid" in rollback.observation, "the preview names the placeholder, never a real receiver"


def test_the_model_sees_the_production_tool_specs():
    recorded = recorded_registry(scenario("config-typo").recordings, ["session-service"])
    production = production_tools(["session-service"])
    assert recorded.specs() == [tool.spec for tool in production]
    assert {tool.name for tool in recorded if tool.side_effect} == {"rollback_deployment", "restart_service"}


async def test_a_call_without_a_recording_is_a_tool_failure_not_a_crash():
    scn = scenario("bad-deploy")
    script = [text_turn("search_logs", service="gateway", since="1h"), finish("v3.8.0 NPE, roll back to v3.7.4")]
    outcome = await run_scenario(scn, ScriptedModel(script))
    step = outcome.result.steps[0]
    assert step.error == "exception"
    assert 'no recorded output for search_logs(service="gateway", since="1h"' in step.observation
    assert outcome.result.stop_reason is StopReason.FINISH


async def test_the_most_specific_recording_answers():
    scn = scenario("bad-deploy")
    script = [
        text_turn("search_logs", service="checkout", since="30m", level="info", query="deploy"),
        finish("done"),
    ]
    outcome = await run_scenario(scn, ScriptedModel(script))
    assert "DeployEvent: checkout v3.8.0 rolled out" in outcome.result.steps[0].observation


# --- each level fails when it should ----------------------------------------------------------------


async def test_a_wrong_answer_fails_the_answer_level():
    scn = scenario("bad-deploy")
    script = [*script_turns(scn)[:-1], finish("The database is slow; scale it up.")]
    outcome = await run_scenario(scn, ScriptedModel(script))
    assert not outcome.passed
    assert outcome.scores.answer.score == 0.0
    assert outcome.scores.tools.score == 1.0
    assert outcome.scores.path.score == 1.0
    assert any("missing fact: the bad version" in p for p in outcome.scores.answer.problems)


async def test_a_missing_call_fails_the_tools_and_path_levels():
    scn = scenario("config-typo")
    without_rollback = [t for t in script_turns(scn) if '"action": "rollback_deployment"' not in t]
    outcome = await run_scenario(scn, ScriptedModel(without_rollback))
    assert outcome.scores.tools.score == pytest.approx(2 / 3)
    assert outcome.scores.tools.problems == (
        'never called: rollback_deployment(service="session-service", to_version="v1.9.0")',
    )
    assert outcome.scores.path.score == 0.0
    assert outcome.scores.path.problems[0].startswith("gave up early: finished after 5 steps without calling")
    assert len(outcome.result.steps) == 6, "5 tool calls (load_tools one of them), then the finish: not a step"


async def test_a_misordered_call_fails_the_tools_level_when_order_matters():
    scn = scenario("config-typo")
    assert scn.expect.ordered
    turns = script_turns(scn)
    compare = next(t for t in turns if '"action": "compare_refs"' in t)
    rollback = next(t for t in turns if '"action": "rollback_deployment"' in t)
    rest = [t for t in turns[:-1] if t not in (compare, rollback)]
    outcome = await run_scenario(scn, ScriptedModel([*rest, rollback, compare, turns[-1]]))
    assert not outcome.passed
    assert outcome.scores.tools.problems == (
        'called out of order: rollback_deployment(service="session-service", to_version="v1.9.0")',
    )
    assert outcome.scores.path.score == 1.0, "every expected call was made: not an early give-up"


async def test_a_forbidden_call_fails_the_tools_level():
    scn = scenario("red-herring-deploy")
    turns = script_turns(scn)
    rollback = text_turn(
        "rollback_deployment", "The deploy came first: roll it back.", service="cart", to_version="v4.1.9"
    )
    outcome = await run_scenario(scn, ScriptedModel([*turns[:-1], rollback, turns[-1]]))
    assert not outcome.passed
    assert outcome.scores.tools.problems == (
        'called a forbidden tool: rollback_deployment(service="cart", to_version="v4.1.9")',
    )


async def test_a_redundant_repeat_fails_the_path_level():
    scn = scenario("bad-deploy")
    turns = script_turns(scn)
    outcome = await run_scenario(scn, ScriptedModel([turns[0], turns[0], *turns[1:]]))
    assert outcome.scores.answer.score == 1.0
    assert outcome.scores.tools.score == 1.0
    assert outcome.scores.path.score == pytest.approx(6 / 7), "one of seven calls (load_tools among them) wasted"
    assert outcome.scores.path.problems[0].startswith("redundant: step 2 repeats step 1: query_metrics(")
    assert not outcome.passed


async def test_a_call_before_its_schema_was_offered_fails_the_path_level():
    scn = scenario("bad-deploy")
    turns = [t for t in script_turns(scn) if '"action": "load_tools"' not in t]
    outcome = await run_scenario(scn, ScriptedModel(turns))
    assert outcome.result.ok, "dispatch runs a call to any registered tool"
    assert not outcome.passed
    assert outcome.scores.path.problems == (
        "unseen schema: step 4 called compare_refs before the run offered its schema (load_tools)",
        "unseen schema: step 5 called rollback_deployment before the run offered its schema (load_tools)",
    )
    assert outcome.scores.path.score == pytest.approx(3 / 5)


async def test_a_back_and_forth_fails_the_path_level():
    scn = scenario("dependency-outage")
    turns = script_turns(scn)
    metrics, logs = turns[0], turns[1]
    outcome = await run_scenario(scn, ScriptedModel([metrics, logs, metrics, logs, *turns[2:]]))
    problems = outcome.scores.path.problems
    assert any(p.startswith("back-and-forth: steps 1-4 alternate query_metrics(") for p in problems), problems
    assert outcome.scores.path.score < 1.0
    assert not outcome.passed


async def test_stopping_without_a_finish_is_giving_up():
    scn = scenario("disk-full")
    outcome = await run_scenario(scn, scripted_model(scn.model_copy(update={"script": scn.script[:2]})))
    assert outcome.result.stop_reason is StopReason.LLM_ERROR
    assert outcome.scores.path.score == 0.0
    assert outcome.scores.path.problems[0].startswith("gave up: stopped with llm_error")
    assert "the script has no turn 3" in outcome.scores.path.problems[0]
    assert outcome.scores.answer.problems == ("no final answer (stop: llm_error)",)


async def test_a_lower_threshold_passes_a_partly_good_run():
    scn = scenario("bad-deploy")
    turns = script_turns(scn)
    outcome = await run_scenario(scn, ScriptedModel([turns[0], turns[0], *turns[1:]]), min_score=0.8)
    assert outcome.passed
    assert 0.8 <= outcome.scores.path.score < 1.0, "the repeated call cost path points, not the pass"
    assert outcome.scores.path.problems, "and the report says what it cost"
    assert outcome.scores.answer.score == 1.0
    strict = await run_scenario(scn, ScriptedModel([turns[0], turns[0], *turns[1:]]))
    assert not strict.passed, "at the default threshold the same run fails"


# --- malformed scenario files -------------------------------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "broken.toml"
    path.write_text(text)
    return path


def test_a_malformed_scenario_names_the_file_and_the_field(tmp_path):
    text = (SCENARIOS / "bad-deploy.toml").read_text().replace('tool = "compare_refs"', 'tool = "compare_ref"', 1)
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=r"broken\.toml: invalid scenario") as caught:
        load_scenario(path, catalogue_names())
    assert "expect.calls.2.tool: unknown tool 'compare_ref'; known: compare_refs," in str(caught.value)


@pytest.mark.parametrize(
    ("replace", "by", "field"),
    [
        ("title = ", "titel = ", "title: Field required"),
        ("any_of = ['v3\\.8\\.0']", "any_of = ['v3[8']", "expect.facts.0.any_of: 'v3[8' is not a regular expression"),
        ("output = '''\nAliases", "error = \"x\"\noutput = '''\nAliases", "recordings.0: give exactly one of 'output'"),
        ('tool = "finish"', 'tool = "query_metrics"', "script: the last turn must be"),
    ],
)
def test_each_field_error_is_named(tmp_path, replace, by, field):
    text = (SCENARIOS / "bad-deploy.toml").read_text()
    assert replace in text
    path = write(tmp_path, text.replace(replace, by, 1))
    with pytest.raises(ValueError, match=r"broken\.toml") as caught:
        load_scenario(path, catalogue_names())
    assert field in str(caught.value)


def test_a_scenario_runbook_with_a_broken_front_matter_names_the_runbook_and_the_line(tmp_path):
    text = (SCENARIOS / "runbook-names-the-query.toml").read_text()
    assert "services: [checkout]" in text
    path = write(tmp_path, text.replace("services: [checkout]", "service: checkout", 1))
    with pytest.raises(ValueError, match=r"broken\.toml") as caught:
        load_scenario(path, catalogue_names())
    assert "runbooks: checkout/high-5xx.md: line 3: unknown key 'service': write 'services'" in str(caught.value)


async def test_a_scenarios_runbooks_are_named_at_the_start_and_read_for_real():
    outcome = await run_scenario(
        scenario("runbook-names-the-query"), scripted_model(scenario("runbook-names-the-query"))
    )
    assert "[payments/latency]" in outcome.result.task_data
    assert outcome.result.steps[0].observation.startswith("Runbook payments/latency: Payments latency above SLO")


async def test_a_scenarios_past_incidents_are_searched_for_real_and_offered_only_with_them():
    scn = scenario("past-incident-red-herring")
    model = scripted_model(scn)
    outcome = await run_scenario(scn, model)
    found = next(s for s in outcome.result.steps if s.call.name == "similar_incidents").observation
    assert "1. 23 days ago" in found
    assert "its root cause, a hypothesis to re-check now: The v5.0.1 deploy added an N+1 query" in found
    assert "rated helpful by 3, wrong by 0" in found
    assert "- similar_incidents: " in offered_or_listed(model.requests[0])
    plain = scenario("bad-deploy")
    without = scripted_model(plain)
    await run_scenario(plain, without)
    assert "similar_incidents" not in offered_or_listed(without.requests[0])


def offered_or_listed(request) -> str:
    """The names of the tools a request offers in full, and `load_tools`' index of the others."""
    return "\n".join(tool.name if tool.name != LOAD_TOOLS_TOOL else tool.description for tool in request.tools)


def test_a_script_that_searches_the_memory_needs_its_past_incidents(tmp_path):
    text = (SCENARIOS / "past-incident-red-herring.toml").read_text()
    without_memory = text.split("[[past_incidents]]")[0] + "[expect]" + text.split("[expect]", 1)[1]
    with pytest.raises(ValueError, match="the script calls similar_incidents: give the memory it searches"):
        load_scenario(write(tmp_path, without_memory), catalogue_names())


def test_invalid_toml_names_the_file(tmp_path):
    with pytest.raises(ValueError, match=r"broken\.toml: not valid TOML"):
        load_scenario(write(tmp_path, "title = \n"), catalogue_names())


def test_an_empty_directory_says_what_it_expected(tmp_path):
    with pytest.raises(ValueError, match=r"no \*\.toml scenario files in"):
        load_scenarios(tmp_path, catalogue_names())


# --- the command line ------------------------------------------------------------------------------


def test_cli_eval_scripted_passes_every_shipped_scenario(capsys, tmp_path):
    code, out, err = cli(capsys, "eval", SCENARIOS, "--scripted", "--traces", tmp_path)
    assert code == 0, out + err
    assert "side effects dry_run: none was executed" in out
    assert "· bad-deploy: pass" in err, "progress goes to stderr as each scenario ends"
    for name in REQUIRED_KINDS:
        row = next(line for line in out.splitlines() if line.startswith(name + " "))
        assert row.split()[1:5] == ["1.00", "1.00", "1.00", "pass"], row
    assert f"total: {len(list(SCENARIOS.glob('*.toml')))}/" in out
    assert {p.stem for p in tmp_path.glob("*.json")} >= set(REQUIRED_KINDS), "each run's trace is saved"


def test_cli_eval_fails_with_the_reason_shown(capsys, tmp_path):
    text = (SCENARIOS / "bad-deploy.toml").read_text().replace("v3\\.8\\.0", "v9\\.9\\.9")
    (tmp_path / "changed-expectation.toml").write_text(text)
    code, out, _ = cli(capsys, "eval", tmp_path, "--scripted")
    assert code == 1
    assert "FAIL" in out
    assert "✗ changed-expectation: Bad deploy" in out
    assert "answer: missing fact: the bad version (any of v9\\.9\\.9)" in out


def test_cli_eval_json(capsys):
    code, out, _ = cli(capsys, "eval", SCENARIOS / "dns-failure.toml", "--scripted", "--json")
    report = json.loads(out)
    assert code == 0
    assert report["side_effects"] == "dry_run"
    assert report["scenarios"][0]["scores"] == {"answer": 1.0, "tools": 1.0, "path": 1.0}
    assert report["scenarios"][0]["stop_reason"] == "finish"


def test_cli_eval_without_a_model_suggests_scripted(capsys, monkeypatch, tmp_path):
    for name in (
        "OPSAGENT_LLM_MODEL",
        "OPSAGENT_MODEL",
        "OPSAGENT_LLM_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "eval", SCENARIOS)
    assert code == 2
    assert "no model is configured" in err
    assert "--scripted" in err


def test_cli_eval_malformed_file_exits_2_naming_it(capsys, tmp_path):
    (tmp_path / "bad.toml").write_text('title = "x"\n')
    code, _, err = cli(capsys, "eval", tmp_path, "--scripted")
    assert code == 2
    assert "bad.toml: invalid scenario" in err
    assert "task: Field required" in err


# --- any configured model: the OpenAI-compatible adapter over the real wire ------------------------------


async def test_eval_runs_a_configured_model_over_the_openai_wire(tmp_path):
    scn = scenario("memory-leak-oom")
    replies = [
        Reply(
            openai_completion(
                turn.thought or None,
                tool_calls=[openai_tool_call(f"c{i}", turn.tool, turn.args)],
                usage={"prompt_tokens": 900, "completion_tokens": 60},
            )
        )
        for i, turn in enumerate(scn.script)
    ]
    config = tmp_path / "opsagent.toml"
    config.write_text('[policy]\nmode = "full"\n')  # eval forces dry runs whatever the configuration says
    async with FakeModelServer() as server:
        server.script(*replies)
        env = {
            **os.environ,
            "OPSAGENT_LLM_BASE_URL": server.url,
            "OPSAGENT_LLM_MODEL": "fake-gpt",
            "OPSAGENT_LLM_API_KEY": "sk-test",
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli.main", "--config", str(config), "eval", str(SCENARIOS / "memory-leak-oom.toml"), "--json",
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    report = json.loads(out)
    assert report["model"] == "fake-gpt"
    assert report["scenarios"][0]["passed"] is True
    assert report["scenarios"][0]["prompt_tokens"] == 900 * len(scn.script), "usage comes from the wire"
    first = server.requests[0].json
    offered = {tool["function"]["name"] for tool in first["tools"]}
    [index] = [
        tool["function"]["description"] for tool in first["tools"] if tool["function"]["name"] == LOAD_TOOLS_TOOL
    ]
    listed = {line[2:].split(":")[0] for line in index.splitlines()[1:]}
    assert offered | listed >= {tool.name for tool in production_tools(scn.repos)}, "offered in full or listed"
    assert not any("runbook" in name for name in offered | listed), "a scenario without runbooks has no runbook tools"
    assert scn.task in json.dumps(first["messages"])
