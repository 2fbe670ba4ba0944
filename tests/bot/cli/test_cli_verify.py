"""Verifying approved actions at the terminal: `opsagent verify TRACE|RUN_ID` reads the symptom again now (against a
real Prometheus), says whether the action held and records the check with the run; `investigate` waits for the first
check of an action approved at the terminal when it is due within a minute, and otherwise says how to check later."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from opsagent_process import environment, on_a_terminal, opsagent

from bot.store.factory import opened_store
from bot.store.records import RunRecord, RunStatus
from kernel import RunResult, load_trace
from samples.demo_config import write_demo_config
from testkit.fakes.action_receiver import ActionReceiver
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_tool_call
from testkit.servers.prometheus import PrometheusServer

TRACES = Path(__file__).resolve().parents[2] / "fixtures" / "traces"
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
SECRET = "action-webhook-secret-0123456789"


def metrics_config(root: Path, prometheus: PrometheusServer, extra: str = "") -> Path:
    """The session's Prometheus, read as of its data's end (the tools' "now")."""
    config = root / "opsagent.toml"
    config.write_text(
        f'[tools]\nrecorded_at = "{prometheus.anchor.isoformat()}"\n\n[tools.metrics]\nurl = "{prometheus.url}"\n'
        + extra
    )
    return config


def rolled_back(prometheus: PrometheusServer) -> RunResult:
    """A run that read order-service's 5xx rate (step 1) and rolled back with an approval 4 minutes before the
    session Prometheus's data ends: the 5xx is still at 12% then."""
    trace = load_trace(TRACES / "v3_guidance_and_verification.json")
    action = trace.steps[1]
    approval = action.approval.__class__(decision="approved", by="U0SAM42", at=prometheus.anchor - timedelta(minutes=4))
    steps = [trace.steps[0], action.__class__(**{**_fields(action), "approval": approval}), trace.steps[2]]
    return trace.model_copy(update={"steps": steps, "verifications": []})


def _fields(step: object) -> dict[str, object]:
    return {name: getattr(step, name) for name in step.__slots__}  # type: ignore[attr-defined]


async def test_verify_a_trace_says_the_action_did_not_hold_and_records_each_check(tmp_path, prometheus):
    config = metrics_config(tmp_path, prometheus)
    path = tmp_path / "trace.json"
    path.write_text(rolled_back(prometheus).to_json())
    first = await opsagent("--config", config, "verify", path, cwd=tmp_path)
    assert first.code == 1, first
    [line] = [line for line in first.out.splitlines() if line.startswith("✗ ")]
    assert line.startswith("✗ step 2 rollback_deployment payments v3.1.0 · verified ")
    assert re.search(
        r"UTC: http_5xx_rate 12\.0% → 12\.0% ▁[▁-█]{10}█ · did not hold \(before the incident: 0\.10%\)$", line
    )
    assert f"trace saved: {path}" in first.out
    again = await opsagent("--config", config, "verify", path, cwd=tmp_path)
    assert "· rechecked " in again.out
    checks = load_trace(path).verifications
    assert [(v.step, v.check, v.outcome, v.symptom_step) for v in checks] == [
        (2, 1, "did_not_hold", 1),
        (2, 2, "did_not_hold", 1),
    ]


async def test_verify_a_stored_run_records_the_check_in_its_trace_and_audit_log(tmp_path, prometheus):
    store_url = f"sqlite:///{tmp_path}/runs.db"
    config = metrics_config(tmp_path, prometheus, f'\n[store]\nurl = "{store_url}"\n')
    trace = rolled_back(prometheus)
    async with opened_store(store_url) as store:
        now = datetime.now(UTC)
        await store.runs.create_run(
            RunRecord(
                run_id=trace.run_id,
                channel="",
                thread_ts="",
                requested_by="sam (terminal)",
                task=trace.task,
                status=RunStatus.FINISHED,
                trace_json=trace.to_json(),
                created_at=now,
                updated_at=now,
            )
        )
    ran = await opsagent("--config", config, "verify", trace.run_id, cwd=tmp_path)
    assert ran.code == 1, ran
    assert "did not hold" in ran.out
    assert f"recorded in the run store (run {trace.run_id})" in ran.out
    async with opened_store(store_url) as store:
        saved = RunResult.from_json((await store.runs.get_run(trace.run_id)).trace_json)
        events = [e for e in await store.audit.audit_log(run_id=trace.run_id) if e.kind == "action_verified"]
    assert [(v.check, v.outcome) for v in saved.verifications] == [(1, "did_not_hold")]
    assert [(e.detail["step"], e.detail["outcome"], e.detail["now"]) for e in events] == [(2, "did_not_hold", "12.0%")]
    draft = await opsagent("--config", config, "postmortem", trace.run_id, "--facts-only", cwd=tmp_path)
    [row] = [line for line in draft.out.splitlines() if "did not hold" in line]
    assert "| OpsAgent | step 2 rollback\\_deployment: verified " in row, "the postmortem's timeline has the check"
    unknown = await opsagent("--config", config, "verify", "no-such-run", cwd=tmp_path)
    assert unknown.code == 2
    assert unknown.err.startswith("opsagent: no run no-such-run with a readable trace in the run store")


async def test_verify_a_run_without_an_approved_action_says_there_is_nothing_to_verify(tmp_path, prometheus):
    path = tmp_path / "trace.json"
    path.write_text((TRACES / "v1_native_awaiting_approval.json").read_text())  # its rollback still waits
    ran = await opsagent("--config", metrics_config(tmp_path, prometheus), "verify", path, cwd=tmp_path)
    assert ran.code == 1
    assert "has no approved action that ran: nothing to verify" in ran.out
    assert "trace saved" not in ran.out, "nothing recorded"


def scripted(server: FakeModelServer) -> None:
    """A run that reads the 5xx rate, rolls order-service back, and answers."""
    read = openai_tool_call("c1", "query_metrics", {"service": "order-service", "metric": "http_5xx_rate"})
    rollback = openai_tool_call("c2", "rollback_deployment", {"service": "order-service", "to_version": "v2.13.2"})
    finish = openai_tool_call("c3", "finish", {"answer": "v2.14.0 broke order-service (step 1)."})
    server.script(*(Reply(openai_completion(None, tool_calls=[call])) for call in (read, rollback, finish)))


@pytest.mark.parametrize("after_s", [1, 120])
async def test_investigate_waits_for_a_check_due_within_a_minute_else_says_how_to_check_later(tmp_path, after_s):
    async with ActionReceiver(SECRET) as receiver, FakeModelServer() as server:
        extra = f'[tools.actions.webhook]\nurl = "{receiver.actions_url}"\n\n[policy]\nmode = "full"\n\n'
        config = write_demo_config(tmp_path, datetime.now(UTC), extra=extra + f"[verification]\nafter_s = {after_s}\n")
        scripted(server)
        env = environment(
            OPSAGENT_LLM_BASE_URL=f"{server.url}/v1", OPSAGENT_LLM_MODEL="fake-gpt", OPSAGENT_ACTION_SECRET=SECRET
        )
        trace = tmp_path / "trace.json"
        code, shown = await on_a_terminal(
            "--config", config, "investigate", "order-service 5xx?", "--trace", trace,
            cwd=tmp_path, env=env, columns=250, term="dumb", stdin_too=True, stderr_too=True,
            answers={b"Approve? [y/N]": b"y\n"},
        )  # fmt: skip
    said = ESCAPES.sub("", shown)
    assert code == 0, said
    assert len(receiver.executed) == 1, "the rollback ran"
    checks = load_trace(trace).verifications
    if after_s == 1:
        [line] = [line for line in said.splitlines() if line.startswith("✗ step 2 ")] or [said]
        assert line.startswith("✗ step 2 rollback_deployment order-service v2.13.2 · verified ")
        assert "UTC: http_5xx_rate 12.0% → 12.0% ▁" in line, "the demo's recording is still at 12%"
        assert line.endswith("· did not hold (before the incident: 0.05%–0.15%)")
        assert [(v.check, v.outcome) for v in checks] == [(1, "did_not_hold")]
    else:
        assert "to verify the action once it has had time to work (from " in said
        assert f"UTC): opsagent verify {trace}" in said
        assert checks == []
    assert json.loads(trace.read_text())["ok"] is True


async def test_the_postmortem_of_a_trace_file_has_its_checks_in_the_timeline(tmp_path):
    trace = TRACES / "v3_guidance_and_verification.json"
    draft = await opsagent("postmortem", trace, "--facts-only", cwd=tmp_path)
    assert draft.code == 0, draft
    [row] = [line for line in draft.out.splitlines() if line.startswith("| 20") and "verified" in line]
    assert row.endswith(
        "| OpsAgent | step 2 rollback\\_deployment: verified 14:09 UTC: http\\_5xx\\_rate 12.0% → 0.20% ▁▁▁▁▇█████▁▁ · held |"
    )
