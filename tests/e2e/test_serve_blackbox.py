"""`opsagent serve --http` as a black box: a real process, a fake Slack, a fake model, a real action receiver.

This is the issue's definition of done: a signed mention leads to a thread with every step and the answer,
and a side-effect call leads to an approval whose signed Approve click runs the action exactly once.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import aiohttp
from aiohttp import web

from bot.slack.action_ids import APPROVE
from samples.demo_config import write_demo_config
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_tool_call
from testkit.fakes.otlp_receiver import OtlpReceiver
from testkit.fakes.prometheus_scrape import parse_samples, sample
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_requests import app_mention_event, block_actions_payload, signed_action, signed_event
from testkit.fakes.slack_workspace import BOT_USER_ID, SIGNING_SECRET, TEAM_ID
from testkit.servers.bot_process import serve, serve_env
from testkit.servers.local_server import free_port

CHANNEL, ALICE, BOB = "C0INCIDENT", "U0ALICE", "U0BOB"


def trace_id(slack: SlackFake, thread_ts: str) -> str:
    """The run id of the trace uploaded into the thread."""
    return json.loads(next(f for f in slack.files.values() if f.thread_ts == thread_ts).content)["run_id"]


async def wait_for(condition, within: float = 20.0):
    async with asyncio.timeout(within):
        while not (found := condition()):  # noqa: ASYNC110 - the state lives in other processes
            await asyncio.sleep(0.05)
    return found


async def test_serve_http_end_to_end(tmp_path):
    received: list[bytes] = []

    async def accept(request: web.Request) -> web.Response:
        received.append(await request.read())
        return web.json_response({"status": "queued"}, status=202)

    receiver_app = web.Application()
    receiver_app.router.add_post("/actions", accept)
    receiver = web.AppRunner(receiver_app)
    await receiver.setup()
    receiver_port = free_port()
    await web.TCPSite(receiver, "127.0.0.1", receiver_port).start()

    extra = (
        f'[tools.actions.webhook]\nurl = "http://127.0.0.1:{receiver_port}/actions"\n'
        f'[policy]\nmode = "full"\n[slack]\napprovers = ["{ALICE}"]\npost_interval_s = 0\n'
    )
    config = write_demo_config(tmp_path, datetime.now(UTC), extra=extra)
    port = free_port()
    async with (
        SlackFake(users={ALICE: {"name": "alice"}, BOB: {"name": "bob"}}) as slack,
        FakeModelServer() as model,
        OtlpReceiver() as otlp,
    ):
        model.script(
            Reply(
                openai_completion(
                    None,
                    tool_calls=[
                        openai_tool_call("c1", "query_metrics", {"service": "order-service", "metric": "http_5xx_rate"})
                    ],
                )
            ),
            Reply(
                openai_completion(
                    "Known: the jump follows v2.14.0 (step 1).",
                    tool_calls=[
                        openai_tool_call(
                            "c2", "rollback_deployment", {"service": "order-service", "to_version": "v2.13.2"}
                        )
                    ],
                )
            ),
            Reply(
                openai_completion(
                    None,
                    tool_calls=[
                        openai_tool_call(
                            "c3", "finish", {"answer": "Root cause: v2.14.0 (step 1); rolled back (step 2)."}
                        )
                    ],
                )
            ),
        )
        env = serve_env(config, slack, model, OPSAGENT_ACTION_SECRET="hmac-key", OTEL_EXPORTER_OTLP_ENDPOINT=otlp.url)
        proc = await serve(env, port, output=asyncio.subprocess.PIPE)
        try:
            async with aiohttp.ClientSession() as http:

                async def up() -> bool:
                    try:
                        async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                            return response.status == 200
                    except aiohttp.ClientError:
                        return False

                async with asyncio.timeout(30):
                    while not await up():  # noqa: ASYNC110 - polling another process
                        await asyncio.sleep(0.1)

                mention = slack.add_message(CHANNEL, f"<@{BOT_USER_ID}> order-service 5xx at 12%", user=BOB)
                body, headers = signed_event(SIGNING_SECRET, app_mention_event(CHANNEL, BOB, mention.text, mention.ts))
                async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body, headers=headers) as response:
                    assert response.status == 200

                def approval():
                    for message in slack.thread(CHANNEL, mention.ts):
                        for block in message.blocks:
                            for element in block.get("elements", []):
                                if element.get("action_id") == APPROVE:
                                    return message, element["value"]
                    return None

                message, approval_id = await wait_for(approval)
                assert received == []
                payload = block_actions_payload(
                    ALICE,
                    TEAM_ID,
                    CHANNEL,
                    message.ts,
                    mention.ts,
                    APPROVE,
                    approval_id,
                    response_url=slack.response_url(CHANNEL, message.ts, user=ALICE),
                )
                body, headers = signed_action(SIGNING_SECRET, payload)
                async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body, headers=headers) as response:
                    assert response.status == 200
                await wait_for(lambda: "white_check_mark" in slack.reactions.get((CHANNEL, mention.ts), []))
                async with http.get(f"http://127.0.0.1:{port}/metrics") as response:
                    exposition = await response.text()
        finally:
            proc.terminate()
            output = (await asyncio.wait_for(proc.communicate(), 30))[0].decode()
            await receiver.cleanup()
    assert proc.returncode == 0, output
    logged = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    finished = next(entry for entry in logged if entry["event"] == "run_finished")
    assert finished["run_id"] == trace_id(slack, mention.ts)
    assert finished["channel"] == CHANNEL
    assert finished["user"] == BOB
    approved = next(entry for entry in logged if entry["event"] == "approval_decided")
    assert approved["run_id"] == finished["run_id"]
    assert len(received) == 1
    assert json.loads(received[0])["params"] == {"service": "order-service", "to_version": "v2.13.2"}
    thread = slack.thread(CHANNEL, mention.ts)
    flat = json.dumps([m.blocks for m in thread], ensure_ascii=False)
    assert "eyes" in slack.reactions[(CHANNEL, mention.ts)]
    assert "http_5xx_rate 0.10% → 12.0%" in flat
    assert "approved by" in json.dumps(slack.message(CHANNEL, message.ts).blocks)
    assert "*v2.14.0 (step 1); rolled back.*" in flat, "its answer, as the summary"
    trace = json.loads(next(f for f in slack.files.values() if f.thread_ts == mention.ts).content)
    assert trace["ok"] is True
    assert [s["call"]["name"] for s in trace["steps"]] == ["query_metrics", "rollback_deployment", "finish"]
    samples = parse_samples(exposition)
    assert sample(samples, "opsagent_runs_finished_total", outcome="ok", stop_reason="finish") == 1
    assert sample(samples, "opsagent_approvals_total", decision="approved") == 1
    spans = otlp.spans()  # flushed by the process on SIGTERM
    assert sorted(s.name for s in spans if not s.name.startswith("chat ")) == [
        "execute_tool query_metrics",
        "execute_tool rollback_deployment",
        "invoke_agent opsagent",
    ]
    assert len([s for s in spans if s.name.startswith("chat ")]) == 3
