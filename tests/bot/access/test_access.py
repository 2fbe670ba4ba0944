"""How much work may start: the limits' decision alone, then the real bot (signed events, fake Slack) refusing
with an ephemeral reply that names the limit and when to try again, and starting nothing. Who may ask at all is
tests/bot/access/test_gate.py's."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from structlog.testing import capture_logs

from bot.access.askers import author_teams
from bot.access.identity import Approvers
from bot.access.ledger import InMemoryRunLedger
from bot.access.policy import Allowed, RecentUse, RunRequest, decide
from bot.access.refusals import AccessRefused, RefusalReason
from bot.access.settings import AccessSettings
from bot.settings import load_settings
from bot.slack.refusals import refusal_text
from kernel import LLMResponse, Pricing, TokenUsage, text_turn
from testkit.fakes.clock import T0, ManualClock
from testkit.fakes.slack_workspace import TEAM_ID
from testkit.slack_bot import ALICE, BOB, CHANNEL, FINISH, IncidentBot
from worlds.alert_bot import alert, notification, running_alert_bot

HOME = TEAM_ID
PARTNER = "T0PARTNER"
OTHER_CHANNEL = "C0ELSEWHERE"
PRICE = Pricing(input_per_mtok=10.0, output_per_mtok=30.0)
"""USD per million tokens of the scripted model: a turn of 100,000 prompt tokens costs $1.00."""


# --- the decision alone -------------------------------------------------------------------------------------


def person(user: str = BOB, channel: str = CHANNEL) -> RunRequest:
    return RunRequest(user=user, channel=channel)


def quiet(**overrides) -> RecentUse:
    return RecentUse(**({"user_starts": [], "channel_starts": [], "spent_today_usd": 0.0} | overrides))


def decision(request: RunRequest, recent: RecentUse | None = None, **settings) -> Allowed | AccessRefused:
    return decide(request, settings=AccessSettings(**settings), recent=recent or quiet(), now=T0)


def words(refused: AccessRefused) -> str:
    return refusal_text(refused, now=T0, approvers=Approvers(frozenset({"U0ALICE"})))


def test_work_within_every_limit_may_start():
    assert decision(person()) == Allowed()


def test_a_channel_off_the_allow_list_is_refused_and_the_allowed_ones_named():
    refused = decision(person(channel=OTHER_CHANNEL), allowed_channels=[CHANNEL])
    assert isinstance(refused, AccessRefused)
    assert refused.reason is RefusalReason.CHANNEL
    assert f"<#{CHANNEL}>" in words(refused)
    assert decision(person(), allowed_channels=[CHANNEL]) == Allowed()


def test_the_spend_cap_names_midnight_utc_as_the_reset():
    assert decision(person(), quiet(spent_today_usd=4.99), daily_spend_usd=5.0) == Allowed()
    refused = decision(person(), quiet(spent_today_usd=5.0), daily_spend_usd=5.0)
    assert isinstance(refused, AccessRefused)
    assert refused.reason is RefusalReason.DAILY_SPEND
    assert refused.retry_at == datetime(2026, 12, 1, tzinfo=UTC)
    assert "2026-12-01 00:00 UTC" in words(refused)
    assert "(in 21 h 0 min)" in words(refused)
    assert "$5.00" in words(refused)


def test_the_user_limit_names_when_the_oldest_start_leaves_the_window():
    starts = [T0 - timedelta(minutes=50), T0 - timedelta(minutes=20)]
    assert decision(person(), quiet(user_starts=starts[1:]), runs_per_user_per_hour=2) == Allowed()
    refused = decision(person(), quiet(user_starts=starts), runs_per_user_per_hour=2)
    assert isinstance(refused, AccessRefused)
    assert refused.reason is RefusalReason.USER_RATE
    assert refused.retry_at == T0 + timedelta(minutes=10)
    assert "2026-11-30 03:10 UTC" in words(refused)
    assert "in 10 min 0 s" in words(refused)


def test_runs_not_asked_by_a_person_skip_the_user_limit_but_not_the_channel_ones():
    alert = RunRequest(user="alertmanager", channel=CHANNEL, per_user=False)
    many = [T0 - timedelta(minutes=m) for m in (30, 20, 10)]
    assert decision(alert, quiet(user_starts=many), runs_per_user_per_hour=1) == Allowed()
    refused = decision(alert, quiet(channel_starts=many), runs_per_channel_per_hour=3)
    assert isinstance(refused, AccessRefused)
    assert refused.reason is RefusalReason.CHANNEL_RATE
    assert refused.retry_at == T0 + timedelta(minutes=30)


def test_no_limit_when_a_rate_is_switched_off():
    many = [T0 - timedelta(minutes=1)] * 500
    recent = quiet(user_starts=many, channel_starts=many)
    assert decision(person(), recent, runs_per_user_per_hour=None, runs_per_channel_per_hour=None) == Allowed()


def test_author_teams_reads_every_field_slack_names_the_author_workspace_in():
    connect = {"user": "U0EXT", "team": PARTNER, "user_team": PARTNER, "source_team": PARTNER}
    assert author_teams(connect) == (PARTNER,)
    assert author_teams({"team": HOME, "user_team": PARTNER}) == (PARTNER, HOME)
    assert author_teams({"user": "U0X"}) == ()


def test_the_ledger_window_excludes_a_start_exactly_an_hour_old():
    ledger = InMemoryRunLedger()
    ledger.record_start(user=BOB, channel=CHANNEL, at=T0 - timedelta(hours=1))
    ledger.record_start(user=BOB, channel=CHANNEL, at=T0 - timedelta(minutes=59))
    users, channels = ledger.starts_since(user=BOB, channel=CHANNEL, since=T0 - timedelta(hours=1))
    assert users == channels == [T0 - timedelta(minutes=59)]


def test_the_ledger_counts_each_runs_growth_once_on_the_day_it_was_spent():
    ledger = InMemoryRunLedger()
    late = datetime(2026, 11, 30, 23, 59, tzinfo=UTC)
    ledger.record_spend("r1", 0.4, late)
    ledger.record_spend("r1", 0.4, late)  # the same total again: nothing new spent
    ledger.record_spend("r1", 1.0, late + timedelta(minutes=2), final=True)
    ledger.record_spend("r2", 0.5, late + timedelta(minutes=3))
    assert ledger.spent(late.date()) == pytest.approx(0.4)
    assert ledger.spent(late.date() + timedelta(days=1)) == pytest.approx(1.1)


# --- the configuration ------------------------------------------------------------------------------------


def test_the_access_section_loads_with_its_safe_defaults(tmp_path):
    config = tmp_path / "ops.toml"
    config.write_text('[access]\nallowed_channels = ["C0INCIDENT"]\nruns_per_user_per_hour = 5\n')
    access = load_settings(config, environ={}).access
    assert access.allowed_channels == ["C0INCIDENT"]
    assert access.runs_per_user_per_hour == 5
    assert access.allowed_workspaces == []
    assert access.daily_spend_usd is None


def test_a_spend_cap_without_a_price_for_the_model_says_what_to_add(tmp_path):
    config = tmp_path / "ops.toml"
    config.write_text('[llm]\nmodel = "gpt-4o-mini"\n[access]\ndaily_spend_usd = 20\n')
    with pytest.raises(ValueError, match=r'add \[llm\.prices\."gpt-4o-mini"\]'):
        load_settings(config, environ={})
    config.write_text(
        '[llm]\nmodel = "gpt-4o-mini"\n[llm.prices."gpt-4o-mini"]\ninput_per_mtok = 0.15\noutput_per_mtok = 0.6\n'
        "[access]\ndaily_spend_usd = 20\n"
    )
    assert load_settings(config, environ={}).access.daily_spend_usd == 20


def test_the_old_place_of_max_concurrent_runs_says_where_it_moved(tmp_path):
    config = tmp_path / "ops.toml"
    config.write_text("[slack]\nmax_concurrent_runs = 4\n")
    with pytest.raises(ValueError, match=r"moved from \[slack\] to \[access\]"):
        load_settings(config, environ={})


# --- the real bot -------------------------------------------------------------------------------------------


@pytest.fixture
def access_settings(request):
    return AccessSettings(**getattr(request, "param", {}))


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def incident_bot(script):
    return IncidentBot(script, price=PRICE)


def ephemerals_to(harness, user: str) -> list:
    return [e for e in harness.slack.ephemerals if e.user == user]


async def refusal_to(harness, user: str, count: int = 1):
    shown = await harness.until(lambda: ephemerals_to(harness, user)[count - 1 : count], f"a refusal shown to {user}")
    return shown[0]


def bot_posts(harness, ts: str, channel: str = CHANNEL) -> list:
    return [m for m in harness.thread(ts, channel) if m.ts != ts]


async def test_a_slack_connect_guest_is_refused_privately_and_nothing_runs(harness, script):
    script.append([FINISH])
    with capture_logs() as logs:
        ts = await harness.mention("why 5xx?", user="U0GUESTEXT", author_team=PARTNER)
        refusal = await refusal_to(harness, "U0GUESTEXT")
    assert refusal.thread_ts == ts
    assert "members of the workspace I am installed in" in refusal.text
    assert harness.models == []
    assert bot_posts(harness, ts) == []
    assert not harness.reacted(ts, "eyes")
    refused = [e for e in logs if e["event"] == "request_refused"]
    assert refused == [
        refused[0]
        | {
            "request": "Investigate",
            "reason": "workspace",
            "user": "U0GUESTEXT",
            "channel": CHANNEL,
            "teams": [PARTNER],
        }
    ]
    home = await harness.mention("why 5xx?", user=BOB)
    await harness.until(lambda: harness.reacted(home, "white_check_mark"), "a member's run still runs")


@pytest.mark.parametrize("access_settings", [{"allowed_channels": [CHANNEL]}], indirect=True)
async def test_a_channel_off_the_allow_list_is_refused(harness, script):
    script.append([FINISH])
    ts = await harness.mention("why 5xx?", channel=OTHER_CHANNEL)
    refusal = await refusal_to(harness, BOB)
    assert refusal.channel == OTHER_CHANNEL
    assert f"can't be started in this channel. Ask in <#{CHANNEL}>" in refusal.text
    assert harness.models == []
    assert bot_posts(harness, ts, OTHER_CHANNEL) == []
    allowed = await harness.mention("why 5xx?")
    await harness.until(lambda: harness.reacted(allowed, "white_check_mark"), "the allowed channel's run")


@pytest.mark.parametrize("access_settings", [{"runs_per_user_per_hour": 2}], indirect=True)
async def test_a_users_third_run_within_the_hour_is_refused_with_the_time_to_retry(harness, script, clock):
    script.extend([[FINISH], [FINISH], [FINISH], [FINISH]])
    for minutes in (0, 10):
        clock.now = T0 + timedelta(minutes=minutes)
        ts = await harness.mention(f"run at +{minutes} min", user=BOB)
        await harness.until(lambda ts=ts: harness.reacted(ts, "white_check_mark"), "an admitted run")
    clock.now = T0 + timedelta(minutes=25)
    third = await harness.mention("one more", user=BOB)
    refusal = await refusal_to(harness, BOB)
    assert "you started 2 investigations in the last hour" in refusal.text
    assert "2026-11-30 04:00 UTC" in refusal.text
    assert "in 35 min 0 s" in refusal.text
    assert bot_posts(harness, third) == []
    assert len(harness.models) == 2
    other = await harness.mention("mine", user=ALICE)
    await harness.until(lambda: harness.reacted(other, "white_check_mark"), "another user's run")
    clock.now = T0 + timedelta(minutes=60, seconds=1)
    again = await harness.mention("later", user=BOB)
    await harness.until(lambda: harness.reacted(again, "white_check_mark"), "Bob's run after the hour")
    assert len(ephemerals_to(harness, BOB)) == 1


@pytest.mark.parametrize(
    "access_settings", [{"runs_per_channel_per_hour": 2, "runs_per_user_per_hour": None}], indirect=True
)
async def test_a_channels_third_run_within_the_hour_is_refused(harness, script, clock):
    script.extend([[FINISH], [FINISH], [FINISH]])
    for user in (ALICE, BOB):
        ts = await harness.mention("why 5xx?", user=user)
        await harness.until(lambda ts=ts: harness.reacted(ts, "white_check_mark"), "an admitted run")
    clock.now = T0 + timedelta(minutes=5)
    await harness.mention("and now?", user="U0CAROL")
    refusal = await refusal_to(harness, "U0CAROL")
    assert "this channel started 2 investigations in the last hour" in refusal.text
    assert "2026-11-30 04:00 UTC" in refusal.text
    elsewhere = await harness.mention("why 5xx?", user="U0CAROL", channel=OTHER_CHANNEL)
    await harness.until(lambda: harness.reacted(elsewhere, "white_check_mark", OTHER_CHANNEL), "another channel")
    assert len(harness.models) == 3


@pytest.mark.parametrize("access_settings", [{"daily_spend_usd": 1.0}], indirect=True)
async def test_spend_of_a_run_in_flight_reaches_the_daily_cap(harness, script):
    costly = TokenUsage(prompt_tokens=100_000)  # $1.00 at PRICE
    first = LLMResponse(text=text_turn("query_metrics", service="order-service"), usage=costly)
    script.append([first, LLMResponse(text=text_turn("slow", seconds=30), usage=costly)])
    ts = await harness.mention("why 5xx?", user=ALICE)
    await harness.until(lambda: "query_metrics" in json.dumps([m.blocks for m in bot_posts(harness, ts)]), "step 1")
    assert harness.services.investigations.active, "the run is still in flight"
    late = await harness.mention("and this?", user=BOB)
    refusal = await refusal_to(harness, BOB)
    assert "today's model spend cap ($1.00) is reached ($1.00 spent)" in refusal.text
    assert "2026-12-01 00:00 UTC" in refusal.text
    assert bot_posts(harness, late) == []
    assert len(harness.models) == 1


@pytest.mark.parametrize("access_settings", [{"daily_spend_usd": 1.5}], indirect=True)
async def test_finished_runs_spend_adds_up_to_the_daily_cap(harness, script, clock):
    costly = TokenUsage(prompt_tokens=100_000)  # $1.00 at PRICE
    script.extend([[LLMResponse(text=FINISH, usage=costly)] for _ in range(2)])
    for user in (ALICE, BOB):
        ts = await harness.mention("why 5xx?", user=user)
        await harness.until(lambda ts=ts: harness.reacted(ts, "white_check_mark"), "a paid run ends")
    await harness.mention("once more", user=ALICE)
    refusal = await refusal_to(harness, ALICE)
    assert "($2.00 spent)" in refusal.text
    clock.now = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    script.append([FINISH])
    tomorrow = await harness.mention("a new day", user=ALICE)
    await harness.until(lambda: harness.reacted(tomorrow, "white_check_mark"), "the cap resets at midnight UTC")


@pytest.mark.parametrize("access_settings", [{"max_concurrent_runs": 1}], indirect=True)
async def test_the_concurrent_cap_refuses_until_a_run_ends(harness, script):
    script.extend([[text_turn("slow", seconds=30)], [FINISH]])
    await harness.mention("check something slow", user=ALICE)
    await harness.until(lambda: harness.services.investigations.active, "the first run is going")
    second = await harness.mention("why 5xx?", user=BOB)
    refusal = await refusal_to(harness, BOB)
    assert "the most investigations I run at once (1) are running" in refusal.text
    assert bot_posts(harness, second) == []
    assert len(harness.models) == 1


async def test_an_alert_started_run_refused_is_said_in_its_thread(script):
    script.append([FINISH])
    elsewhere = AccessSettings(allowed_channels=[OTHER_CHANNEL])
    async with running_alert_bot(script, access=elsewhere) as bot:
        status, _ = await bot.notify(notification(alert("fp-1")))
        assert status == 200
        [opened] = await bot.until(lambda: bot.alert_threads(), "the alert's thread: refused runs still show alerts")
        said = await bot.until(lambda: bot.thread(opened.ts)[1:], "the refusal in the thread")
        assert said[0].text.startswith("Not started: investigations can't be started in this channel")
        assert f"<#{OTHER_CHANNEL}>" in said[0].text
        assert bot.slack.ephemerals == []
        assert bot.incident.models == []
        refused = await bot.services.store.audit.audit_log()
        assert [(e.kind, e.actor, e.detail["reason"]) for e in refused if e.kind == "request_refused"] == [
            ("request_refused", "alertmanager", "channel")
        ]
