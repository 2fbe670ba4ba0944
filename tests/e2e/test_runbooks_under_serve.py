"""Finding 1 of the adversarial review, against the real `opsagent serve`: a runbook whose front matter made the old
parser backtrack for minutes (`tags: [latency` + spaces + `']`) is read while the bot keeps answering `/healthz`,
and the investigation it is re-read for runs to its end.

No time is asserted: each probe must be answered within a generous timeout (the old parser held the GIL for 40 s
at 500 spaces, ~5 min at 1,000), and the logs must show the runbooks read.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import aiohttp

from samples.demo_config import write_demo_config
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_tool_call
from testkit.fakes.slack_api import SlackFake
from testkit.servers.bot_process import BotProcess, serve_env

CHANNEL, BOB = "C0INCIDENT", "U0BOB"
PROBE_TIMEOUT_S = 10.0
HOSTILE = (
    "---\ntitle: Latency above SLO\nservices: [order-service]\ntags: [latency" + " " * 1000 + "']\n---\nCheck p99.\n"
)
PLAIN = "---\ntitle: Order-service 5xx\nservices: [order-service]\ntags: [5xx]\n---\nRoll back the last deploy.\n"


async def test_a_hostile_front_matter_is_read_while_healthz_answers(tmp_path):
    runbooks = tmp_path / "runbooks"
    runbooks.mkdir()
    (runbooks / "latency.md").write_text(HOSTILE)
    (runbooks / "errors.md").write_text(PLAIN)
    for copy in range(20):  # many of them: each re-read parses every one
        (runbooks / f"latency-{copy}.md").write_text(HOSTILE)
    extra = f'[knowledge]\nrunbooks = "{runbooks}"\nsync_interval_s = 0\n[slack]\npost_interval_s = 0\n'
    config = write_demo_config(tmp_path, datetime.now(UTC), extra=extra)
    async with SlackFake(users={BOB: {"name": "bob"}}) as slack, FakeModelServer() as model:
        model.script(
            Reply(
                openai_completion(None, tool_calls=[openai_tool_call("c1", "search_runbooks", {"query": "latency"})])
            ),
            Reply(openai_completion(None, tool_calls=[openai_tool_call("c2", "finish", {"answer": "Check p99."})])),
        )
        async with BotProcess(serve_env(config, slack, model), tmp_path / "bot.log") as bot:
            probes: list[int] = []
            ts = await bot.mention(slack, CHANNEL, BOB, "order-service latency, which runbook?")
            timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT_S)
            async with asyncio.timeout(120):
                while not slack.reactions.get((CHANNEL, ts), []).count("white_check_mark"):
                    async with bot.http.get(f"{bot.url}/healthz", timeout=timeout) as response:
                        probes.append(response.status)
                    await asyncio.sleep(0.05)
            loaded = [e for e in bot.logged() if e.get("event") == "runbooks_loaded"]
    assert probes, "the bot was probed while it worked"
    assert set(probes) == {200}, "every probe answered while the runbooks were read"
    assert loaded, bot.tail()
    assert (loaded[-1]["count"], loaded[-1]["skipped"]) == (22, 0), "the hostile front matter parses, like any other"
    found = json.dumps(model.requests[1].json["messages"][-1])
    assert "Latency above SLO" in found, "the search found the runbook whose front matter was hostile"
