"""`opsagent eval export --feedback DIR`: rated runs in the run store become scenarios that `opsagent eval
--scripted` runs: a 👍 run's answer is expected (and its replay passes), a 👎's reason is the corrected answer
(and the replayed, rated-wrong investigation fails on it), a 👎 without a reason is skipped, saying why."""

from __future__ import annotations

import asyncio
import json
import tomllib

from bot.cli.main import main
from bot.store.factory import opened_store
from bot.store.records import FeedbackRecord, Rating, utc_now
from kernel import Agent, ScriptedModel, text_turn
from worlds.slack_bot import IncidentBot, save_run


def verdict(root_cause: str):
    return text_turn(
        "finish",
        summary="Checkout failed.",
        root_cause=root_cause,
        confidence="likely",
        evidence=[{"claim": "5xx jumped", "steps": [1]}],
    )


async def rated_runs(url: str) -> dict[str, str]:
    runs = {}
    async with opened_store(url) as store:
        for number, (name, root_cause, rating, reason) in enumerate(
            (
                ("liked", "The v2.14.0 deploy dropped the payments timeout.", Rating.UP, ""),
                ("corrected", "The deploy broke it.", Rating.DOWN, "no: the `payments-db` pool was exhausted"),
                ("unexplained", "Cosmic rays.", Rating.DOWN, ""),
            )
        ):
            model = ScriptedModel(
                [text_turn("query_metrics", "Why: the 5xx.", service="checkout"), verdict(root_cause)]
            )
            trace = await Agent(llm=model, tools=IncidentBot([]).tools).run(f"checkout 5xx ({name})")
            await save_run(store, trace, thread_ts=f"1700000000.00010{number}", task_data="Alert 1: CheckoutHigh5xx")
            await store.record_feedback(
                FeedbackRecord(run_id=trace.run_id, user="U0BOB", rating=rating, reason=reason, at=utc_now())
            )
            runs[name] = trace.run_id
    return runs


def test_rated_runs_become_scenarios_that_eval_runs(capsys, tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    config = tmp_path / "opsagent.toml"
    config.write_text(f'[store]\nurl = "{url}"\n')
    runs = asyncio.run(rated_runs(url))
    exported = tmp_path / "exported"
    code = main(["--config", str(config), "eval", "export", "--feedback", str(exported)])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.startswith("exported 2 rated runs as scenarios in")
    assert f"skipped {runs['unexplained']}: rated 👎 without a reason: there is no corrected answer to expect" in err
    liked = tomllib.loads((exported / f"feedback-{runs['liked']}.toml").read_text())
    assert liked["task"] == "checkout 5xx (liked)"
    assert liked["data"] == "Alert 1: CheckoutHigh5xx"
    assert liked["expect"]["facts"] == [{"about": "names v2.14.0", "any_of": ["v2\\.14\\.0"]}]
    assert liked["expect"]["calls"] == [{"tool": "query_metrics", "args": {"service": "checkout"}}]
    assert [turn["tool"] for turn in liked["script"]] == ["query_metrics", "finish"]
    assert liked["recordings"][0]["output"] == "checkout 5xx jumped from 0.10% to 12.0% at t-10m"
    corrected = tomllib.loads((exported / f"feedback-{runs['corrected']}.toml").read_text())
    assert corrected["expect"]["facts"] == [{"about": "names payments-db", "any_of": ["payments\\-db"]}]

    code = main(["--config", str(config), "eval", str(exported), "--scripted", "--json"])
    report = json.loads(capsys.readouterr().out)
    outcomes = {entry["scenario"]: entry for entry in report["scenarios"]}
    assert code == 1, "the replayed 👎 investigation reaches the rated-wrong answer"
    assert outcomes[f"feedback-{runs['liked']}"]["passed"] is True
    wrong = outcomes[f"feedback-{runs['corrected']}"]
    assert wrong["passed"] is False
    assert wrong["problems"] == ["answer: missing fact: names payments-db (any of payments\\-db)"]


def test_export_needs_its_directory(capsys, tmp_path):
    config = tmp_path / "opsagent.toml"
    config.write_text(f'[store]\nurl = "sqlite:///{tmp_path}/runs.db"\n')
    assert main(["--config", str(config), "eval", "export"]) == 2
    assert "opsagent eval export --feedback DIR" in capsys.readouterr().err
