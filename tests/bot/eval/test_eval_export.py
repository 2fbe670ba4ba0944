"""`opsagent eval export --feedback DIR`: rated runs in the run store become scenarios that `opsagent eval
--scripted` runs: a 👍 run's answer is expected (and its replay passes), a 👎's reason is the corrected answer
(and the replayed, rated-wrong investigation fails on it), a 👎 without a reason is skipped, saying why. Recorded
text with control characters is written escaped and loads back as it was; a run whose file cannot be written is
reported, leaves nothing behind, and the others are exported."""

from __future__ import annotations

import asyncio
import json
import sys
import tomllib
from pathlib import Path

from bot.cli.main import main
from bot.eval.export import rated_scenarios, scenario_text, toml_string, write_scenarios
from bot.eval.scenarios import load_scenario
from bot.eval.tools import catalogue_names
from bot.store.factory import opened_store
from bot.store.records import FeedbackRecord, Rating, RunRecord, RunStatus, utc_now
from kernel import Agent, ScriptedModel, text_turn
from testkit.slack_bot import IncidentBot, save_run

CONTROLS = '\x7f \x00 \x1b[31mred\x1b[0m \u2028 \x85 \x9b tab\there \r\n "quoted" back\\slash'
"""DEL, NUL, an ANSI colour, the line separator, C1 controls (NEL, CSI), and what a string needs escaped anyway."""
UNWRITTEN = {chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029)} - {"\n"}
"""What an exported file never holds raw (a newline only ends a line)."""


def verdict(root_cause: str):
    return text_turn(
        "finish",
        summary="Checkout failed.",
        root_cause=root_cause,
        confidence="likely",
        evidence=[{"claim": "5xx jumped", "steps": [1]}],
    )


RATED = (
    ("liked", "The v2.14.0 deploy dropped the payments timeout.", Rating.UP, ""),
    ("corrected", "The deploy broke it.", Rating.DOWN, "no: the `payments-db` pool was exhausted"),
    ("unexplained", "Cosmic rays.", Rating.DOWN, ""),
)


async def rated_runs(url: str, rated=RATED, *, service: str = "checkout") -> dict[str, str]:
    runs = {}
    async with opened_store(url) as store:
        for number, (name, root_cause, rating, reason) in enumerate(rated):
            model = ScriptedModel(
                [text_turn("query_metrics", f"Why: the 5xx.{reason}", service=service), verdict(root_cause)]
            )
            trace = await Agent(llm=model, tools=IncidentBot([]).tools).run(f"checkout 5xx ({name})")
            await save_run(store, trace, thread_ts=f"1700000000.00010{number}", task_data="Alert 1: CheckoutHigh5xx")
            await store.feedback.record_feedback(
                FeedbackRecord(run_id=trace.run_id, user="U0BOB", rating=rating, reason=reason, at=utc_now())
            )
            runs[name] = trace.run_id
    return runs


def configured(tmp_path: Path) -> tuple[str, Path]:
    url = f"sqlite:///{tmp_path}/runs.db"
    config = tmp_path / "opsagent.toml"
    config.write_text(f'[store]\nurl = "{url}"\n')
    return url, config


def test_rated_runs_become_scenarios_that_eval_runs(capsys, tmp_path):
    url, config = configured(tmp_path)
    runs = asyncio.run(rated_runs(url))
    exported = tmp_path / "exported"
    code = main(["--config", str(config), "eval", "export", "--feedback", str(exported)])
    out, err = capsys.readouterr()
    assert code == 0, "a 👎 without a reason cannot be a scenario: said, not a failure"
    assert out.startswith(f"exported 2 of 3 rated runs as scenarios in {exported}; 1 skipped\n")
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


def test_recorded_control_characters_are_written_escaped_and_load_back_as_they_were(capsys, tmp_path):
    url, config = configured(tmp_path)
    rated = (
        ("liked", f"The v2.14.0 deploy {CONTROLS}", Rating.UP, ""),
        ("corrected", "The deploy broke it.", Rating.DOWN, f"no: {CONTROLS}"),
    )
    runs = asyncio.run(rated_runs(url, rated, service=f"checkout {CONTROLS}"))
    exported = tmp_path / "exported"
    assert main(["--config", str(config), "eval", "export", "--feedback", str(exported)]) == 0
    assert capsys.readouterr().out.startswith(f"exported 2 of 2 rated runs as scenarios in {exported}\n")
    for name, run_id in runs.items():
        path = exported / f"feedback-{run_id}.toml"
        raw = path.read_text(encoding="utf-8")
        assert not UNWRITTEN & set(raw), "every control character escaped (an editor or a terminal acts on them)"
        scenario = tomllib.loads(raw)
        assert scenario["recordings"][0]["args"] == {"service": f"checkout {CONTROLS}"}
        assert scenario["recordings"][0]["output"].startswith(f"checkout {CONTROLS} 5xx jumped")
        assert load_scenario(path, catalogue_names()).task == f"checkout 5xx ({name})"
    liked = tomllib.loads((exported / f"feedback-{runs['liked']}.toml").read_text(encoding="utf-8"))
    assert CONTROLS in liked["script"][-1]["args"]["answer"]
    corrected = tomllib.loads((exported / f"feedback-{runs['corrected']}.toml").read_text(encoding="utf-8"))
    assert corrected["script"][0]["thought"] == f"Why: the 5xx.no: {CONTROLS}"
    assert corrected["expect"]["facts"][0]["any_of"][0].startswith("no:\\ \x7f\\ \x00")  # the correction, as a regex

    code = main(["--config", str(config), "eval", str(exported), "--scripted", "--json"])
    outcomes = {entry["scenario"]: entry for entry in json.loads(capsys.readouterr().out)["scenarios"]}
    assert code == 1
    assert outcomes[f"feedback-{runs['liked']}"]["passed"] is True, "the replayed answer is the recorded one"
    assert outcomes[f"feedback-{runs['corrected']}"]["passed"] is False


def test_a_run_whose_file_cannot_be_written_is_said_and_the_others_are_exported(capsys, tmp_path):
    url, config = configured(tmp_path)
    rated = [(f"run {n}", f"The v2.1{n} deploy broke it.", Rating.UP, "") for n in range(3)]
    asyncio.run(rated_runs(url, rated))
    order = list(dict.fromkeys(r.run_id for r in asyncio.run(_rated(url))))
    exported = tmp_path / "exported"
    blocked = exported / f"feedback-{order[1]}.toml"
    blocked.mkdir(parents=True)  # the middle run's file cannot be written: a directory has its name
    code = main(["--config", str(config), "eval", "export", "--feedback", str(exported)])
    out, err = capsys.readouterr()
    assert code == 1
    assert out.startswith(f"exported 2 of 3 rated runs as scenarios in {exported}; 1 failed (see above)\n")
    assert err == f"failed {order[1]}: could not write {blocked}: Is a directory\n"
    assert sorted(p.name for p in exported.iterdir()) == sorted(f"feedback-{run}.toml" for run in order)
    assert list(blocked.iterdir()) == [], "nothing staged is left behind"
    for run in (order[0], order[2]):
        assert load_scenario(exported / f"feedback-{run}.toml", catalogue_names()).task.startswith("checkout 5xx")


def test_a_run_id_that_cannot_name_a_file_is_not_written_anywhere(capsys, tmp_path):
    url, config = configured(tmp_path)
    asyncio.run(_rated_as(url, "../../escaped"))
    exported = tmp_path / "deep" / "exported"
    assert main(["--config", str(config), "eval", "export", "--feedback", str(exported)]) == 1
    out, err = capsys.readouterr()
    assert err == "failed ../../escaped: its run id cannot name a file\n"
    assert out.startswith("exported 0 of 1 rated run as scenarios in")
    assert list(exported.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "opsagent.toml", "runs.db"]


async def _rated_as(url: str, run_id: str) -> None:
    """A rated run stored under `run_id` (no run of the kernel's is named so)."""
    model = ScriptedModel([text_turn("query_metrics", "Why.", service="checkout"), verdict("v2.14.0")])
    trace = await Agent(llm=model, tools=IncidentBot([]).tools).run("checkout 5xx")
    async with opened_store(url) as store:
        await save_run(store, trace, run_id=run_id)
        await store.feedback.record_feedback(
            FeedbackRecord(run_id=run_id, user="U0BOB", rating=Rating.UP, at=utc_now())
        )


async def _rated(url: str) -> list[FeedbackRecord]:
    async with opened_store(url) as store:
        return await store.feedback.rated_runs()


async def test_a_scenario_that_does_not_load_back_keeps_the_older_file_and_the_others_are_written(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.db"
    runs = await rated_runs(url, RATED[:2])
    async with opened_store(url) as store:
        texts, _ = await rated_scenarios(store.feedback, store.runs, catalogue_names())
    older = tmp_path / f"feedback-{runs['liked']}.toml"
    older.write_text(texts[runs["liked"]])
    texts[runs["liked"]] = texts[runs["liked"]].replace('tool = "query_metrics"', 'tool = "no_such_tool"', 1)
    written, failed = write_scenarios(texts, tmp_path, catalogue_names())
    assert written == [tmp_path / f"feedback-{runs['corrected']}.toml"]
    assert [(f.run_id, f.failed) for f in failed] == [(runs["liked"], True)]
    assert failed[0].why.startswith(
        f"its scenario does not load back (feedback-{runs['liked']}.toml: invalid scenario:"
    )
    assert failed[0].why.endswith("this is a bug in OpsAgent, please report it")
    assert "no_such_tool" not in older.read_text(), "the older file is kept as it was"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_every_character_loads_back_from_a_toml_string_and_a_lone_surrogate_is_replaced():
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000)
    encoded = toml_string(every)
    assert not UNWRITTEN & set(encoded)
    assert "\n" not in encoded
    assert tomllib.loads(f"text = {encoded}")["text"] == every
    lone = toml_string("a\ud800b\udfff")
    assert tomllib.loads(f"text = {lone}")["text"] == "a\ufffdb\ufffd"


async def test_a_run_holding_a_lone_surrogate_becomes_a_scenario_with_the_replacement_character():
    # No store can hold one (UTF-8 cannot), but a str can: the scenario is still written, U+FFFD in its place.
    model = ScriptedModel([text_turn("query_metrics", "Why \ud800", service="checkout\udc00"), verdict("v2.14.0")])
    trace = await Agent(llm=model, tools=IncidentBot([]).tools).run("checkout 5xx \ud83d")
    now = utc_now()
    record = RunRecord(
        run_id=trace.run_id,
        channel="C1",
        thread_ts="1.2",
        requested_by="U0BOB",
        task=trace.task,
        status=RunStatus.FINISHED,
        created_at=now,
        updated_at=now,
    )
    rating = FeedbackRecord(run_id=trace.run_id, user="U0BOB", rating=Rating.UP, reason="", at=now)
    scenario = tomllib.loads(scenario_text(record, trace, [rating], catalogue_names()))
    assert scenario["task"] == "checkout 5xx \ufffd"
    assert scenario["script"][0] == {
        "thought": "Why \ufffd",
        "tool": "query_metrics",
        "args": {"service": "checkout\ufffd"},
    }
