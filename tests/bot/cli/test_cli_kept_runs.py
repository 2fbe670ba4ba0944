"""Memory and drafts outside `serve`, with the real `opsagent` in a subprocess: with `[store]` configured,
`investigate` keeps its runs in the run store (the memory of past incidents remembers them, `postmortem RUN_ID`
drafts them); without it, only the trace file is written and no database is created; `postmortem` also takes a
trace file, needing no run store."""

from __future__ import annotations

import getpass
import json
from datetime import UTC, datetime
from pathlib import Path

from opsagent_process import opsagent

from samples.demo_config import write_demo_config

DEMO_TASK_START = "order-service 5xx went from 0.1% to 12% in 3 minutes"


def with_store(config: Path, url: str) -> Path:
    config.write_text(config.read_text() + f'\n[store]\nurl = "{url}"\n')
    return config


async def test_investigate_keeps_its_run_in_the_configured_store_for_memory_and_postmortem(tmp_path) -> None:
    database = tmp_path / "runs.db"
    config = with_store(write_demo_config(tmp_path, datetime.now(UTC)), f"sqlite:///{database}")

    ran = await opsagent("--config", config, "investigate", "--scripted", cwd=tmp_path)

    assert ran.code == 0, ran
    [trace] = (tmp_path / "traces").glob("*.json")
    run_id = trace.stem
    assert f"kept in the run store, remembered for similar_incidents: opsagent postmortem {run_id}" in ran.out
    listed = await opsagent("--config", config, "memory", "list", "--json", cwd=tmp_path)
    [incident] = json.loads(listed.out)
    assert (incident["run_id"], incident["outcome"]) == (run_id, "finish")
    assert incident["task"].startswith(DEMO_TASK_START)
    assert "order-service" in incident["services"]
    draft = await opsagent("--config", config, "postmortem", run_id, "--facts-only", cwd=tmp_path)
    assert draft.code == 0, draft
    assert draft.out.startswith(f"# Postmortem draft: {DEMO_TASK_START}")
    rows = [line.split(" | ")[1:] for line in draft.out.splitlines() if line.startswith("| 20")]
    who = f"{getpass.getuser()} \\(terminal\\)"
    assert [row[0] for row in rows] == [who, "OpsAgent"], "the run's start and end, from the audit log"
    assert rows[1][1] == "investigation ended: finish |"
    assert "**Recorded verdict:** \\`pool.max\\_size\\`" in draft.out
    assert "- Thread: none (the investigation was not asked for in Slack)" in draft.out
    assert f"- Run `{run_id}` (its trace: kept in the run store)" in draft.out


async def test_without_a_store_investigate_keeps_only_the_trace_and_creates_no_database(tmp_path) -> None:
    config = write_demo_config(tmp_path, datetime.now(UTC))

    ran = await opsagent("--config", config, "investigate", "--scripted", cwd=tmp_path)

    assert ran.code == 0, ran
    assert "kept in the run store" not in ran.out
    assert list((tmp_path / "traces").glob("*.json"))
    assert not list(tmp_path.glob("*.db")), "no database nobody asked for"


async def test_a_store_that_cannot_be_opened_stops_before_the_run(tmp_path) -> None:
    config = with_store(write_demo_config(tmp_path, datetime.now(UTC)), "sqlite:///no/such/dir/runs.db")

    ran = await opsagent("--config", config, "investigate", "--scripted", cwd=tmp_path)

    assert ran.code == 2, ran
    assert ran.err.startswith("opsagent: "), "one line saying what to fix, no traceback"
    assert "Traceback" not in ran.err
    assert not (tmp_path / "traces").exists(), "nothing ran, so nothing is lost"


async def test_postmortem_drafts_a_trace_file_without_any_run_store(tmp_path) -> None:
    config = write_demo_config(tmp_path, datetime.now(UTC))
    investigated = await opsagent("--config", config, "investigate", "--scripted", cwd=tmp_path)
    assert investigated.code == 0, investigated
    [trace] = (tmp_path / "traces").glob("*.json")

    draft = await opsagent("postmortem", trace, "--facts-only", cwd=tmp_path)

    assert draft.code == 0, draft
    assert draft.out.startswith(f"# Postmortem draft: {DEMO_TASK_START}")
    assert f"All times UTC; from the trace file {trace}." in draft.out.replace("\\", "")
    assert "investigation started: order-service 5xx" in draft.out
    assert f"- Run `{trace.stem}` (its trace: the file {trace})" in draft.out.replace("\\", "")
    assert "- The thread's messages: not read: a trace file has no thread" in draft.out
    assert not list(tmp_path.glob("*.db"))
    not_a_trace = tmp_path / "notes.json"
    not_a_trace.write_text('{"hello": "world"}')
    refused = await opsagent("postmortem", not_a_trace, cwd=tmp_path)
    assert refused.code == 2
    assert refused.err.startswith(f"opsagent: {not_a_trace} is not an OpsAgent trace")
