"""Approved actions verified, end to end: the Slack app on the fake Slack, its runs reading a real Prometheus that
scrapes a local exporter every second, and a rollback that makes the exporter's metric recover (or not).

The module's incident: every service's error ratio sits at 0.1% for a few seconds, then jumps to 12%. Each test runs
one investigation about a service of its own that ends in an approved rollback; `after_s` later the run's read of the
symptom is made again, and the action's line in the thread, the verdict and (when it did not hold) a reply that
mentions the approver say what it found.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from bot.slack.action_ids import APPROVE
from bot.store.protocol import RunStore
from bot.verification.settings import VerificationSettings
from kernel import RunResult, text_turn
from testkit.fakes.model_server import closed_port_url
from testkit.fakes.slack_api import SlackFake
from testkit.servers.live_prometheus import LiveIncident, RollbackBot, live_incident
from testkit.slack_bot import ALICE, BOB, CHANNEL, USERS, HttpHarness, running_app

AFTER_S = 3.0
FEW_S = 5.0
"""A check is reported within `after_s` of its action and this (time to query, and to reach Slack)."""
POLL_S = 5.0
"""A replica that did not schedule a check finds it at its next look (`bot.verification.service.POLL_S`)."""
SERVICES = ("checkout", "payments", "search", "cart", "billing", "ledger", "shipping")
RECOVERED = 0.002
ONLY_THE_FIRST = VerificationSettings(after_s=AFTER_S, recheck_after_s=0)


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveIncident]:
    """The exporter and Prometheus: every service's errors normal for 8 scrapes, then at 12% for 5 seconds."""
    with live_incident(tmp_path_factory.mktemp("live-prometheus"), SERVICES) as incident:
        yield incident


def investigation(service: str, *, read_first: bool = True) -> list[Any]:
    """A run that reads the service's errors (unless not `read_first`), rolls it back, and answers citing the read."""
    read = text_turn(
        "query_metrics", "Why: see the errors.", service=service, metric="error_ratio", window="5m", step="1s"
    )
    rollback = text_turn("rollback_deployment", "Why: v2 broke it.", service=service, to_version="v1")
    evidence = [{"claim": "errors jumped to 12%", "steps": [1]}] if read_first else []
    finish = text_turn("finish", "Known: v2.", summary=f"v2 broke {service}.", root_cause="v2", evidence=evidence)
    return [read, rollback, finish] if read_first else [rollback, finish]


async def approved_run(harness: HttpHarness, service: str) -> tuple[str, str, float]:
    """Ask for the investigation as Bob, approve its rollback as Alice, and wait for the verdict: the thread, the
    approval message's ts, and when the approval was clicked (loop time)."""
    ts = await harness.mention(f"{service} errors at 12%, find the cause", user=BOB)
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "the approval request")
    clicked = asyncio.get_running_loop().time()
    assert await harness.click(APPROVE, approval_id, message.ts, ts, user=ALICE) == 200
    await harness.ended(ts)
    return ts, message.ts, clicked


def shown(harness: HttpHarness, ts: str) -> str:
    """A message's blocks as the text Slack renders from."""
    return json.dumps(harness.slack.message(CHANNEL, ts).blocks, ensure_ascii=False)


async def reported(harness: HttpHarness, ts: str, words: str, since: float, within_s: float) -> str:
    """Wait until the message at `ts` says `words`, at most `within_s` after `since` (loop time); what it shows."""
    left = since + within_s - asyncio.get_running_loop().time()
    await harness.until(lambda: words in shown(harness, ts), f"{words!r} in the message", within=max(left, 0.1))
    return shown(harness, ts)


async def checks_in_audit(store: RunStore) -> list[dict[str, Any]]:
    return [e.detail | {"run_id": e.run_id} for e in await store.audit.audit_log() if e.kind == "action_verified"]


async def test_a_rollback_whose_metric_recovers_is_reported_held_with_both_values(incident, run_store):
    bot = RollbackBot([investigation("checkout")], incident, RECOVERED)
    options = {"verification": ONLY_THE_FIRST, "symptoms": incident.metrics()}
    async with SlackFake(users=USERS) as slack, running_app(slack, bot, run_store, start=True, **options) as harness:
        ts, approval_ts, clicked = await approved_run(harness, "checkout")
        line = await reported(harness, approval_ts, "· held", clicked, AFTER_S + FEW_S)
        assert "rollback_deployment checkout v1" in line
        assert f"approved by <@{ALICE}>" in line
        assert "error_ratio 12.0% → 0.20%" in line, "the metric, its value when the action ran and now"
        assert "verified <!date^" in line
        summary = harness.verdict(ts)
        await reported(harness, summary.ts, "error_ratio 12.0% → 0.20%", clicked, AFTER_S + FEW_S)
        assert "*Actions*" in shown(harness, summary.ts)
        assert not any("did not hold" in m.text for m in harness.thread(ts)), "no one is notified of a success"
    [checked] = await checks_in_audit(run_store)
    assert (checked["step"], checked["check"], checked["outcome"]) == (2, 1, "held")
    assert (checked["before"], checked["now"]) == ("12.0%", "0.20%")
    trace = RunResult.from_json((await run_store.runs.get_run(checked["run_id"])).trace_json)
    [verification] = trace.verifications
    assert (verification.symptom_step, verification.baseline) == (1, "0.10%")
    assert verification.sparkline[0] == "▁"


async def test_a_rollback_whose_metric_stays_high_did_not_hold_and_the_approver_is_told(incident, run_store):
    bot = RollbackBot([investigation("payments")], incident, None)
    options = {"verification": ONLY_THE_FIRST, "symptoms": incident.metrics()}
    async with SlackFake(users=USERS) as slack, running_app(slack, bot, run_store, start=True, **options) as harness:
        ts, approval_ts, clicked = await approved_run(harness, "payments")
        line = await reported(harness, approval_ts, "did not hold", clicked, AFTER_S + FEW_S)
        assert "error_ratio 12.0% → 12.0%" in line
        assert "did not hold (before the incident: 0.10%)" in line
        [reply] = await harness.until(lambda: [m for m in harness.thread(ts) if "did not hold" in m.text], "a reply")
        assert reply.text.startswith(f"⚠️ <@{ALICE}>, the action you approved did not hold: *2*")
        assert "error_ratio 12.0% → 12.0% ▁" in reply.text
        assert "(before the incident: 0.10%). The symptom is still there" in reply.text
        await reported(harness, harness.verdict(ts).ts, "did not hold", clicked, AFTER_S + FEW_S)
    [checked] = await checks_in_audit(run_store)
    assert (checked["outcome"], checked["before"], checked["now"]) == ("did_not_hold", "12.0%", "12.0%")


@pytest.mark.parametrize(
    ("service", "after_rollback", "broken", "why"),
    [
        ("search", None, True, "error_ratio: the query failed: cannot reach Prometheus at http://127.0.0.1:"),
        ("cart", "gone", False, "error_ratio: no data "),
    ],
    ids=["the query fails", "the service stops reporting"],
)
async def test_a_check_without_data_is_inconclusive_never_held(
    incident, run_store, service, after_rollback, broken, why
):
    bot = RollbackBot([investigation(service)], incident, after_rollback)
    symptoms = incident.metrics(closed_port_url() if broken else None)
    options = {"verification": ONLY_THE_FIRST, "symptoms": symptoms}
    async with SlackFake(users=USERS) as slack, running_app(slack, bot, run_store, start=True, **options) as harness:
        ts, approval_ts, clicked = await approved_run(harness, service)
        line = await reported(harness, approval_ts, ": inconclusive (", clicked, AFTER_S + FEW_S)
        assert "checked <!date^" in line
        assert why in line
        assert "held" not in line
        assert not any("did not hold" in m.text for m in harness.thread(ts)), "nobody is paged without data"
    [checked] = await checks_in_audit(run_store)
    assert (checked["outcome"], checked["before"], checked["now"]) == ("inconclusive", "", "")


async def test_an_action_with_no_read_before_it_is_not_verified(incident, run_store):
    bot = RollbackBot([investigation("billing", read_first=False)], incident, RECOVERED)
    options = {"verification": ONLY_THE_FIRST, "symptoms": incident.metrics()}
    async with SlackFake(users=USERS) as slack, running_app(slack, bot, run_store, start=True, **options) as harness:
        ts, approval_ts, clicked = await approved_run(harness, "billing")
        line = await reported(harness, approval_ts, "not verified: no metric to re-check", clicked, AFTER_S + FEW_S)
        assert "held" not in line
        await reported(harness, harness.verdict(ts).ts, "not verified: no metric to re-check", clicked, AFTER_S + FEW_S)
    [checked] = await checks_in_audit(run_store)
    assert (checked["outcome"], checked["metric"]) == ("not_verified", "")


async def test_a_check_scheduled_before_a_restart_is_made_after_it(incident, run_store):
    bot = RollbackBot([investigation("ledger")], incident, RECOVERED)
    later = VerificationSettings(after_s=2 * AFTER_S, recheck_after_s=0)
    options = {"verification": later, "symptoms": incident.metrics()}
    async with SlackFake(users=USERS) as slack:
        async with running_app(slack, bot, run_store, start=True, **options) as before:
            ts, approval_ts, clicked = await approved_run(before, "ledger")
        assert await checks_in_audit(run_store) == [], "the process stopped before the check was due"
        async with running_app(slack, bot, run_store, start=True, **options) as after:
            line = await reported(after, approval_ts, "· held", clicked, later.after_s + POLL_S + FEW_S)
            assert "error_ratio 12.0% → 0.20%" in line
            await reported(after, after.verdict(ts).ts, "· held", clicked, later.after_s + POLL_S + FEW_S)
    [checked] = await checks_in_audit(run_store)
    assert (checked["check"], checked["outcome"]) == (1, "held")


async def test_of_two_replicas_one_makes_each_check_and_the_second_says_it_is_still_not_holding(incident, run_store):
    bot = RollbackBot([investigation("shipping")], incident, None)
    twice = VerificationSettings(after_s=AFTER_S, recheck_after_s=2 * AFTER_S)
    options = {"verification": twice, "symptoms": incident.metrics()}
    async with (
        SlackFake(users=USERS) as slack,
        running_app(slack, bot, run_store, start=True, **options) as one,
        running_app(slack, bot, run_store, start=True, **options) as two,
    ):
        ts, approval_ts, clicked = await approved_run(one, "shipping")
        line = await reported(one, approval_ts, "rechecked <!date^", clicked, twice.recheck_after_s + POLL_S + FEW_S)
        assert "error_ratio 12.0% → 12.0%" in line
        await asyncio.sleep(POLL_S + 1)  # both replicas have looked for due checks again since
        replies = [m.text for m in two.thread(ts) if m.text.startswith(f"⚠️ <@{ALICE}>, the action you approved")]
        assert [reply.split(":", 1)[0] for reply in replies] == [
            f"⚠️ <@{ALICE}>, the action you approved did not hold",
            f"⚠️ <@{ALICE}>, the action you approved is not holding at its second check",
        ]
    checked = await checks_in_audit(run_store)
    assert [(c["check"], c["outcome"]) for c in checked] == [(1, "did_not_hold"), (2, "did_not_hold")]
    trace = RunResult.from_json((await run_store.runs.get_run(checked[0]["run_id"])).trace_json)
    assert [(v.check, v.outcome) for v in trace.verifications] == [(1, "did_not_hold"), (2, "did_not_hold")]
