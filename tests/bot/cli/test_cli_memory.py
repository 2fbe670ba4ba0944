"""`opsagent memory list|forget` and the memory's line in `opsagent check`, on a real SQLite run store."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest

from bot.cli.main import main
from bot.store.factory import opened_store
from bot.store.records import FeedbackRecord, Rating, RunStatus, utc_now
from kernel import Confidence, StopReason
from opsagent_tools.memory import PastIncident
from samples.store_records import a_run


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


async def remember(url: str) -> None:
    async with opened_store(url) as store:
        for number, (run_id, days) in enumerate((("r-new", 2), ("r-old", 40)), 1):
            await store.runs.create_run(a_run(run_id, thread_ts=f"1700000000.00000{number}"))
            await store.runs.checkpoint(run_id, status=RunStatus.FINISHED, trace_json="{}")
            incident = PastIncident(
                run_id=run_id,
                task="checkout 5xx",
                services=("checkout",),
                root_cause=f"the {run_id} deploy",
                confidence=Confidence.LIKELY,
                outcome=StopReason.FINISH,
                finished_at=utc_now() - timedelta(days=days),
            )
            assert await store.memory.remember_incident(incident)
        await store.feedback.record_feedback(
            FeedbackRecord(run_id="r-new", user="U1", rating=Rating.DOWN, at=utc_now())
        )


def test_list_then_forget_one_then_the_old_ones(capsys, tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    config = tmp_path / "opsagent.toml"
    config.write_text(f'[store]\nurl = "{url}"\n[knowledge]\nmemory_days = 90\n')
    asyncio.run(remember(url))
    code, out, _ = cli(capsys, "--config", config, "memory", "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["run", "finished", "services", "outcome", "feedback", "summary"]
    assert lines[1].split()[:4] == ["r-new", "2", "days", "ago"]
    assert "👍0 👎1" in lines[1]
    assert "the r-new deploy" in lines[1]
    assert lines[-1] == "2 shown (kept 90 days, [knowledge] memory_days)"
    code, out, _ = cli(capsys, "--config", config, "memory", "list", "--json")
    assert [entry["run_id"] for entry in json.loads(out)] == ["r-new", "r-old"]
    code, out, _ = cli(capsys, "--config", config, "check")
    assert (
        "✓ memory: 2 incidents remembered (kept 90 days, [knowledge] memory_days); the newest finished 2 days ago"
        in out
    )
    code, out, _ = cli(capsys, "--config", config, "memory", "forget", "--older-than", "30")
    assert (code, out) == (0, "forgot 1 incident finished more than 30 days ago\n")
    code, out, _ = cli(capsys, "--config", config, "memory", "forget", "r-new")
    assert code == 0
    assert out.startswith("forgot run r-new: it is out of the memory for good")
    code, out, _ = cli(capsys, "--config", config, "memory", "list")
    assert out == "no incidents remembered yet (kept 90 days, [knowledge] memory_days)\n"
    code, _, err = cli(capsys, "--config", config, "memory", "forget", "r-nope")
    assert code == 2
    assert "no run r-nope in the run store" in err


def test_without_a_store_nothing_is_created_and_the_person_is_told(capsys, tmp_path):
    config = tmp_path / "opsagent.toml"
    config.write_text(f'[store]\nurl = "sqlite:///{tmp_path}/none.db"\n')
    code, _, err = cli(capsys, "--config", config, "memory", "list")
    assert code == 2
    assert f"no run store at {tmp_path}/none.db: nothing is remembered yet" in err
    code, out, _ = cli(capsys, "--config", config, "check")
    assert f"✓ memory: no run store at {tmp_path}/none.db yet: `opsagent serve` creates it" in out
    assert not (tmp_path / "none.db").exists()
    with pytest.raises(SystemExit) as exited:
        main(["--config", str(config), "memory", "forget"])
    assert exited.value.code == 2
    assert "one of the arguments RUN_ID --older-than is required" in capsys.readouterr().err
