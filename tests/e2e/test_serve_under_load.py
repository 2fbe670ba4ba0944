"""`opsagent serve --http` under a slowloris attack, as a real process: one client address keeps hundreds of
half-sent requests open (more than the old global cap of 256 connections) and reopens each the server closes.

Health probes and Slack's signed events keep being answered, each on a connection of its own (as a kubelet and
Slack send them); under an open-file limit of 256 the process writes a few dozen log lines and the counts of what it
dropped, not a line per connection; and a process started under a low soft limit raises it to the hard one.
"""

from __future__ import annotations

import resource
from pathlib import Path

import aiohttp
import pytest

from testkit.fakes.slack_requests import app_mention_event, signed_event
from testkit.fakes.slack_workspace import BOT_USER_ID, SIGNING_SECRET
from testkit.servers.bot_process import BotProcess
from testkit.servers.slow_clients import SlowClients
from worlds.fault_incident import ANSWER, BOB, CHANNEL, FINISH, Incident, incident, logged, turn, until

ATTACKER = "127.0.0.2"
"""The slow client's address (all of 127.0.0.0/8 is the loopback): the probes and Slack come from 127.0.0.1."""
HELD = 300
"""Half-sent requests the slow client keeps open at once."""
OLD_CAP = 256
TURNED_AWAY = 2000
"""How many of its connections the server must have closed on the slow client before the log is read."""
MOST_LINES = 200
"""The log of a whole life under attack, at most: start-up and shutdown take about 20 lines, the attack's
events 10 each per 10 s and a count; without the limiter, one line per connection closed (`TURNED_AWAY`)."""


async def fresh(
    bot: BotProcess, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> int:
    """The status of one request on a connection of its own."""
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http,
        http.request(method, f"{bot.url}{path}", data=body, headers=headers) as response,
    ):
        return response.status


def bot_with(inc: Incident, open_files: tuple[int, int]) -> BotProcess:
    """A bot process on the incident's world, started under `open_files` (soft, hard)."""
    bot = inc.bot("bot")
    bot.open_files = open_files
    return bot


async def test_probes_and_slack_events_are_answered_while_one_client_churns_half_sent_requests(
    tmp_path: Path,
) -> None:
    async with incident(tmp_path) as inc:
        inc.model.script(turn(FINISH))
        async with inc.bot("bot") as bot, SlowClients(bot.url, ATTACKER, HELD) as attack:
            await attack.until(lambda counts: counts["busy"] >= HELD, "the server turning the slow client away")
            for _ in range(10):
                assert await fresh(bot, "GET", "/healthz") == 200
            mention = inc.slack.add_message(CHANNEL, f"<@{BOT_USER_ID}> order-service 5xx at 12%", user=BOB)
            body, headers = signed_event(SIGNING_SECRET, app_mention_event(CHANNEL, BOB, mention.text, mention.ts))
            assert await fresh(bot, "POST", "/slack/events", body, headers) == 200
            await until(lambda: inc.outcomes(mention.ts) and inc.traces(mention.ts), "the mention's outcome", bot)
            assert inc.outcomes(mention.ts) == ["white_check_mark"]
            assert inc.traces(mention.ts)[0].answer == ANSWER
            await attack.until(lambda counts: counts["opened"] > OLD_CAP + HELD, "the slow client reopening")
    evicted = [entry for entry in logged(bot, "http_connection_evicted") if entry["before_first_request"]]
    assert evicted, "the slow client's connections gave way"
    assert {entry["client"] for entry in evicted} == {ATTACKER}, "and no other connection before its request"


async def test_a_process_with_256_open_files_under_the_attack_writes_a_bounded_log(tmp_path: Path) -> None:
    async with incident(tmp_path) as inc:
        bot = bot_with(inc, (256, 256))
        async with bot, SlowClients(bot.url, ATTACKER, HELD) as attack:
            await attack.until(lambda counts: counts["busy"] >= TURNED_AWAY, "connections closed on the slow client")
            turned_away = attack.counts["busy"]
            assert await fresh(bot, "GET", "/healthz") == 200
            assert await bot.terminate() == 0
    lines = bot.log.read_text().splitlines()
    assert len(lines) <= MOST_LINES, bot.tail()
    assert not any("out of system resource" in line for line in lines), "the caps keep accept() within the limit"
    [caps] = logged(bot, "http_connection_caps")
    assert (caps["open_files"], caps["total"], caps["backlog"]) == (256, 96, 16)
    closed = ("http_connection_evicted", "http_connection_refused")
    counted = [entry for entry in logged(bot, "log_repeats_dropped") if entry["repeated"].endswith(closed)]
    assert counted, "the dropped lines are counted"
    written = sum(len(logged(bot, event)) for event in closed)
    assert written + sum(entry["dropped"] for entry in counted) >= turned_away, "one for each connection closed"


async def test_start_up_raises_the_open_file_limit_to_the_hard_one_and_sizes_the_caps_by_it(tmp_path: Path) -> None:
    hard = min(4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    if hard <= 256:
        pytest.skip(f"this machine's hard open-file limit ({hard}) leaves nothing to raise a soft limit of 256 to")
    async with incident(tmp_path) as inc, bot_with(inc, (256, hard)) as bot:
        [limit] = logged(bot, "open_file_limit")
        [caps] = logged(bot, "http_connection_caps")
    assert (limit["raised_from"], limit["soft"], limit["hard"], limit["error"]) == (256, hard, hard, None)
    assert caps["open_files"] == hard
    assert caps["total"] + 2 * caps["backlog"] <= hard // 2
