"""A failure inside OpsAgent is said as one, never as a person's Stop, and the run keeps its trace up to the failing
step; and the odd character that used to cause one (a log line's lone surrogate) no longer does. Over the bot as
served (HTTP mode, the fake Slack, a SQLite run store)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from bot.store.records import RunStatus
from kernel import RunResult, StopReason, text_turn
from testkit.slack_bot import CHANNEL, FINISH, IncidentBot

QUERY = text_turn("query_metrics", "Known: nothing yet.", service="order-service")
TAIL = text_turn("tail_logs", "5xx at t-10m (step 1); the logs next.", service="payment-service")


@pytest.fixture
def incident_bot(script):
    """The harness's bot with a log tool that reads a JSON log line a logger cut inside an emoji."""
    bot = IncidentBot(script)
    registry = bot.tools

    @registry.register
    async def tail_logs(service: str) -> str:
        """The service's last error line."""
        record = json.loads('{"msg": "card declined \\ud83d"}')
        return f"{service} ERROR {record['msg']}"

    return bot


def the_trace(harness, ts: str) -> RunResult:
    return RunResult.from_json(next(f for f in harness.slack.files.values() if f.thread_ts == ts).content)


def said(harness, ts: str) -> str:
    return json.dumps([m.blocks for m in harness.thread(ts)], ensure_ascii=False)


async def test_a_log_line_with_a_lone_surrogate_is_read_and_the_run_finishes(harness, script, run_store) -> None:
    script.append([QUERY, TAIL, FINISH])
    ts = await harness.mention("payments fail, why?")
    await harness.ended(ts)
    trace = the_trace(harness, ts)
    assert [s.error for s in trace.steps] == [None, None, None]
    assert trace.steps[1].observation == "payment-service ERROR card declined \ufffd"
    stored = await run_store.runs.run_in_thread(CHANNEL, ts)
    assert RunResult.from_json(stored.trace_json) == trace
    assert "stopped by" not in said(harness, ts)


async def test_a_failure_inside_opsagent_is_labelled_so_and_keeps_the_steps_before_it(
    harness, script, run_store, run_store_file
):
    """The store refuses the second step's checkpoint (a trigger: what a full disk or a bug of ours looks like)."""
    with sqlite3.connect(run_store_file) as db:
        db.execute(
            "CREATE TRIGGER second_checkpoint_fails BEFORE UPDATE OF trace_json ON runs "
            """WHEN NEW.status <> 'finished' AND NEW.trace_json LIKE '%"index":2,%' """
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    script.append([QUERY, QUERY, FINISH])
    ts = await harness.mention("order-service 5xx")
    await harness.ended(ts)
    trace = the_trace(harness, ts)
    assert trace.stop_reason is StopReason.INTERNAL_ERROR
    assert trace.detail == "the run failed inside OpsAgent (IntegrityError); the logs have details"
    assert [s.index for s in trace.steps] == [1], "every step saved before the failing one"
    words = said(harness, ts)
    assert "OpsAgent itself failed" in words
    assert "stopped by" not in words
    stored = await run_store.runs.run_in_thread(CHANNEL, ts)
    assert stored.status is RunStatus.FINISHED
    assert RunResult.from_json(stored.trace_json).stop_reason is StopReason.INTERNAL_ERROR
