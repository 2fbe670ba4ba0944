"""Fault injection with real processes: `opsagent serve --http` killed with SIGKILL and started again, two
replicas on a real PostgreSQL (one killed, the database restarted), Slack and the model failing for a while,
a backend that never answers.

For each: no run is lost, no side effect runs twice (the action receiver counts per Idempotency-Key), every
thread ends with exactly one explicit outcome (✅ or ❌, one last reply, one trace), and the trace, in the
thread and in the store, has every step; the store's audit log has the events.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from aiohttp import web

from bot.slack.action_ids import APPROVE
from bot.store.records import RunStatus
from kernel import RunResult, StopReason
from opsagent_tools.actions.journal import SideEffectState
from testkit.fakes.model_server import RecordedRequest, Reply
from testkit.fakes.slack_api import SlackFake
from testkit.servers.bot_process import BotProcess
from testkit.servers.local_server import LocalServer
from testkit.servers.postgres import PostgresServer
from worlds.fault_incident import (
    ALICE,
    ANSWER,
    BOB,
    CHANNEL,
    FINISH,
    QUERY,
    RESUMED,
    ROLLBACK,
    SETTLE_S,
    SLACK_OUTAGE_S,
    assert_one_outcome,
    audit_kinds,
    ended,
    incident,
    logged,
    model_down,
    saved_as,
    turn,
    until,
)

# --- kill -9, SQLite -------------------------------------------------------------------------------------


async def test_kill_9_mid_run_the_next_process_continues_after_the_last_saved_step(tmp_path: Path) -> None:
    async with incident(tmp_path) as inc:
        inc.model.script(turn(QUERY), turn(FINISH, delay=600), turn(FINISH))  # the 2nd call hangs: kill -9 then
        async with inc.bot("first") as first:
            ts = await first.mention(inc.slack, CHANNEL, BOB, "order-service 5xx at 12%")
            await until(lambda: len(inc.model.requests) == 2, "the second model call", first)
            await first.kill()
        async with inc.store() as store:
            saved = await store.runs.run_in_thread(CHANNEL, ts)
            assert saved is not None
            assert (saved.status, bool(saved.owner)) == (RunStatus.RUNNING, True)  # the dead process's lease
            assert [s.call.name for s in RunResult.from_json(saved.trace_json).steps] == ["query_metrics"]
            async with inc.bot("second") as second:
                await ended(inc, ts, second)
            trace = await assert_one_outcome(inc, store, ts, ok=True, steps=["query_metrics", "finish"])
            assert trace.answer == ANSWER
            assert inc.texts(ts).count(RESUMED) == 1
            # The resumed model call was shown step 1's observation: the run went on, it did not start over.
            assert "jumped from" in json.dumps(inc.model.requests[2].json["messages"])
            assert len(inc.model.requests) == 3
            assert await audit_kinds(store, saved.run_id) == [
                "run_started",
                "tool_call",
                "run_resumed",
                "tool_call",
                "run_finished",
            ]


async def test_kill_9_while_awaiting_approval_the_click_after_the_restart_runs_the_action_once(
    tmp_path: Path,
) -> None:
    async with incident(tmp_path) as inc:
        inc.model.script(turn(ROLLBACK, thought="v2.14.0 broke checkout."), turn(FINISH))
        async with inc.bot("first") as first:
            ts = await first.mention(inc.slack, CHANNEL, BOB, "order-service 5xx, roll back if it is the deploy")
            message_ts, approval_id = await until(lambda: inc.approval(ts), "the approval request", first)
            async with inc.store() as store:
                await until(lambda: saved_as(store, ts, RunStatus.AWAITING_APPROVAL), "the pause saved", first)
            await first.kill()
        async with inc.store() as store, inc.bot("second") as second:
            waiting = f"{RESUMED} It is waiting for the approval above."
            await until(lambda: waiting in inc.texts(ts), "the resumed run waiting for its approval", second)
            assert inc.receiver.requests == {}  # nothing runs without the approval
            assert await second.click(inc.slack, CHANNEL, ALICE, APPROVE, approval_id, message_ts, ts) == 200
            await ended(inc, ts, second)
            trace = await assert_one_outcome(inc, store, ts, ok=True, steps=["rollback_deployment", "finish"])
            [action] = inc.receiver.executed
            assert action["params"] == {"service": "order-service", "to_version": "v2.13.2"}
            assert inc.receiver.requests == {action["idempotency_key"]: 1}
            [effect] = await store.side_effects.side_effects_for_run(trace.run_id)
            assert (effect.key, effect.state) == (action["idempotency_key"], SideEffectState.DONE)
            kinds = await audit_kinds(store, trace.run_id)
            for kind in ("approval_requested", "run_resumed", "approval_decided", "side_effect_started"):
                assert kinds.count(kind) == 1, kinds
            assert (kinds.count("side_effect_done"), kinds[-1]) == (1, "run_finished"), kinds


async def test_kill_9_while_the_action_webhook_holds_its_answer_the_action_still_runs_once(tmp_path: Path) -> None:
    async with incident(tmp_path) as inc:
        inc.model.script(turn(ROLLBACK, thought="v2.14.0 broke checkout."), turn(FINISH))
        inc.receiver.hold()
        async with inc.store() as store:
            async with inc.bot("first") as first:
                ts = await first.mention(inc.slack, CHANNEL, BOB, "order-service 5xx, roll back if it is the deploy")
                message_ts, approval_id = await until(lambda: inc.approval(ts), "the approval request", first)
                assert await first.click(inc.slack, CHANNEL, ALICE, APPROVE, approval_id, message_ts, ts) == 200
                await until(inc.receiver.held.is_set, "the action reaching the receiver", first)
                await first.kill()  # between "executing" and "done"
            run = await store.runs.run_in_thread(CHANNEL, ts)
            assert run is not None
            [effect] = await store.side_effects.side_effects_for_run(run.run_id)
            assert effect.state is SideEffectState.EXECUTING
            async with inc.bot("second") as second:
                await ended(inc, ts, second)
            trace = await assert_one_outcome(inc, store, ts, ok=True, steps=["rollback_deployment", "finish"])
            [action] = inc.receiver.executed  # one execution...
            key = action["idempotency_key"]
            assert inc.receiver.requests == {key: 2}  # ...of two deliveries with one key: the receiver de-duplicated
            assert trace.steps[0].observation.startswith("re-sent after an interruption with the same Idempotency-Key")
            [effect] = await store.side_effects.side_effects_for_run(run.run_id)
            assert (effect.key, effect.state) == (key, SideEffectState.DONE)
            events = await store.audit.audit_log(run_id=run.run_id)
            started = [e.detail["before"] for e in events if e.kind == "side_effect_started"]
            assert started == ["", "executing"]
            assert [e.kind for e in events].count("side_effect_done") == 1


# --- two replicas on PostgreSQL ----------------------------------------------------------------------------


async def test_kill_9_one_of_two_replicas_the_other_takes_the_run_and_honours_the_click(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    async with incident(tmp_path, await postgres.new_database()) as inc:
        inc.model.script(turn(ROLLBACK, thought="v2.14.0 broke checkout."), turn(FINISH))
        async with inc.bot("replica-a") as a, inc.bot("replica-b") as b, inc.store() as store:
            ts = await a.mention(inc.slack, CHANNEL, BOB, "order-service 5xx, roll back if it is the deploy")
            message_ts, approval_id = await until(lambda: inc.approval(ts), "the approval request", a, b)
            run = await until(lambda: saved_as(store, ts, RunStatus.AWAITING_APPROVAL), "the pause saved", a)
            await a.kill()
            # The click lands on the survivor, most likely while the dead replica's lease still holds.
            assert await b.click(inc.slack, CHANNEL, ALICE, APPROVE, approval_id, message_ts, ts) == 200
            await ended(inc, ts, b)
            trace = await assert_one_outcome(inc, store, ts, ok=True, steps=["rollback_deployment", "finish"])
            assert trace.run_id == run.run_id
            assert any(text.startswith(RESUMED) for text in inc.texts(ts))
            [action] = inc.receiver.executed
            assert inc.receiver.requests == {action["idempotency_key"]: 1}
            assert [e["run_id"] for e in logged(b, "run_resumed")] == [run.run_id]
            kinds = await audit_kinds(store, run.run_id)
            assert (kinds.count("approval_decided"), kinds.count("side_effect_done")) == (1, 1), kinds


def by_conversation(request: RecordedRequest) -> Reply:
    """The model for concurrent runs: query the metrics first, then finish; each answer takes a moment."""
    answered = any(message["role"] == "tool" for message in request.json["messages"])
    return turn(FINISH if answered else QUERY, delay=0.5)


async def test_postgres_restarted_under_load_every_run_in_flight_still_ends_once(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    async with incident(tmp_path, await postgres.new_database()) as inc:
        inc.model.respond = by_conversation
        async with inc.bot("replica-a") as a, inc.bot("replica-b") as b, inc.store() as store:
            threads = [
                await bot.mention(inc.slack, CHANNEL, BOB, f"order-service 5xx, case {n}")
                for n, bot in enumerate([a, b, a, b])
            ]
            await until(lambda: len(inc.model.requests) >= len(threads), "every run asking the model", a, b)
            await asyncio.to_thread(postgres.restart)  # ends every session, as a failover would
            for bot in (a, b):  # each replica noticed: its LISTEN connection was cut
                await until(lambda bot=bot: logged(bot, "store.listen_lost"), f"{bot.log.name} losing LISTEN", bot)
            for ts in threads:
                await until(lambda ts=ts: inc.outcomes(ts) and inc.traces(ts), f"the outcome of {ts}", a, b)
            await asyncio.sleep(SETTLE_S)
            for ts in threads:
                await assert_one_outcome(inc, store, ts, ok=True, steps=["query_metrics", "finish"])
            # A replica whose leases ran out while the database was down may lose a run to the other one, which
            # continues it from its last checkpoint (a model call is repeated; the thread says so, and ends once).
            resumed = [e["run_id"] for bot in (a, b) for e in logged(bot, "run_resumed")]
            finished = [e["run_id"] for bot in (a, b) for e in logged(bot, "run_finished")]
            assert len(finished) == len(set(finished)) == len(threads)
            assert 2 * len(threads) <= len(inc.model.requests) <= 2 * (len(threads) + len(resumed))
            assert sum(any(t.startswith("♻️") for t in inc.texts(ts)) for ts in threads) == len(set(resumed))
            assert inc.receiver.requests == {}


def saving_the_end(bot: BotProcess) -> bool:
    """Whether the bot has tried to save a run's end (and failed, the store being down, or gone on)."""
    return any(
        e.get("event") in ("checkpoint_retrying", "run_finished")
        or (e.get("event") == "checkpoint_failed" and e.get("status") == "finished")
        for e in bot.logged()
    )


async def test_postgres_down_as_a_run_ends_the_end_is_saved_once_it_is_back(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    async with incident(tmp_path, await postgres.new_database()) as inc:
        inc.model.script(turn(QUERY), turn(FINISH, delay=3.0))
        async with inc.store() as store:
            async with inc.bot("first") as first:
                ts = await first.mention(inc.slack, CHANNEL, BOB, "order-service 5xx at 12%")
                await until(lambda: len(inc.model.requests) == 2, "the last model call", first)
                await asyncio.to_thread(postgres.stop)
                try:
                    await until(lambda: saving_the_end(first), "the run trying to save its end", first)
                finally:
                    await asyncio.to_thread(postgres.start)
                await ended(inc, ts, first)
                await assert_one_outcome(inc, store, ts, ok=True, steps=["query_metrics", "finish"])
                await first.kill()
            async with inc.bot("second") as second:  # a finished run is never resumed
                await asyncio.sleep(SETTLE_S)
            assert logged(second, "run_resumed") == []
            trace = await assert_one_outcome(inc, store, ts, ok=True, steps=["query_metrics", "finish"])
            assert (await audit_kinds(store, trace.run_id))[-1] == "run_finished"


# --- Slack, the model and a backend failing for a while ------------------------------------------------------


def slack_is_down(slack: SlackFake, status: int) -> None:
    """Every call that writes to a thread answers `status` (429 with Retry-After, or 503) until cleared."""
    for method in ("chat.postMessage", "reactions.add", "files.getUploadURLExternal", "files.completeUploadExternal"):
        slack.fail_always(method, "ratelimited" if status == 429 else "service_unavailable", status=status)


async def test_slack_answering_429_and_5xx_for_a_while_loses_no_message(tmp_path: Path) -> None:
    async with incident(tmp_path) as inc:
        inc.model.script(turn(QUERY, delay=1.0), turn(FINISH))
        async with inc.bot("bot") as bot, inc.store() as store:
            down_for = SLACK_OUTAGE_S / 2
            slack_is_down(inc.slack, 429)
            ts = await bot.mention(inc.slack, CHANNEL, BOB, "order-service 5xx at 12%")
            await until(lambda: len(inc.model.requests) == 2, "the run to end while Slack is down", bot)
            await asyncio.sleep(down_for)
            slack_is_down(inc.slack, 503)
            await asyncio.sleep(down_for)
            failed = {(call.method, call.status) for call in inc.slack.calls if call.status in (429, 503)}
            inc.slack.clear_faults()
            await ended(inc, ts, bot)
            await assert_one_outcome(inc, store, ts, ok=True, steps=["query_metrics", "finish"])
        assert {("reactions.add", 429), ("reactions.add", 503)} <= failed  # the first post waited out both
        thread = inc.slack.thread(CHANNEL, ts)
        texts = [message.text for message in thread]
        assert thread[1].edits[0]["text"] == "🔎 Investigating: order-service 5xx at 12%", "the summary, first"
        assert "Stop" not in json.dumps(thread[1].blocks), "then the verdict, once Slack was back"
        step = next(i for i, text in enumerate(texts) if text.startswith("✓ 1 query_metrics"))
        last = next(i for i, text in enumerate(texts) if text.endswith("|Open the thread>"))
        assert 1 < step < last  # nothing lost, and the thread reads in order once Slack is back
        assert inc.slack.reactions[(CHANNEL, ts)].count("eyes") == 1


async def test_the_model_failing_ends_the_run_explicitly_and_a_brief_failure_is_absorbed(tmp_path: Path) -> None:
    async with incident(tmp_path) as inc:
        inc.model.script(*model_down(4))  # every attempt of one call fails: the run cannot go on
        async with inc.bot("bot") as bot, inc.store() as store:
            down = await bot.mention(inc.slack, CHANNEL, BOB, "order-service 5xx at 12%")
            await ended(inc, down, bot)
            failed = await assert_one_outcome(inc, store, down, ok=False, steps=[])
            assert failed.stop_reason is StopReason.LLM_ERROR
            assert "503" in failed.detail or "overloaded" in failed.detail
            inc.model.script(turn(QUERY), *model_down(2), turn(FINISH))  # a blip the retries ride out
            back = await bot.mention(inc.slack, CHANNEL, BOB, "order-service 5xx again")
            await ended(inc, back, bot)
            await assert_one_outcome(inc, store, back, ok=True, steps=["query_metrics", "finish"])
        assert len(inc.model.requests) == 4 + 4


class SilentBackend(LocalServer):
    """A metrics backend that accepts every request and never answers it."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._hang)

    async def _hang(self, _: web.Request) -> web.Response:
        self.requests += 1
        await self._closing.wait()
        return web.Response(status=503)  # only once the test is over


async def test_a_backend_that_never_answers_becomes_an_observation_and_the_run_ends(tmp_path: Path) -> None:
    async with incident(tmp_path) as inc, SilentBackend() as prometheus:
        inc.model.script(turn(QUERY), turn(FINISH))
        hanging = {"OPSAGENT_TOOLS__METRICS__URL": prometheus.url, "OPSAGENT_TOOLS__METRICS__TIMEOUT_S": "1"}
        async with inc.bot("bot", **hanging) as bot, inc.store() as store:
            ts = await bot.mention(inc.slack, CHANNEL, BOB, "order-service 5xx at 12%")
            await ended(inc, ts, bot)
            trace = await assert_one_outcome(inc, store, ts, ok=True, steps=["query_metrics", "finish"])
        assert prometheus.requests >= 1
        assert "did not answer within 1 s" in f"{trace.steps[0].observation} {trace.steps[0].error}"
        assert "did not answer within 1 s" in json.dumps(inc.model.requests[1].json["messages"])
