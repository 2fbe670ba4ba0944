"""`opsagent serve --http` with `[api]` on, as a black box: a real process, a fake Slack, a fake model, a real action
receiver. A program starts an investigation over REST, reads its whole run as Server-Sent Events, and the action it
asks for runs only after a person clicks in Slack; bad input gets a clear JSON refusal; the limits hold per token;
a stream open across a restart resumes from its last id with nothing lost or repeated."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import aiohttp
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bot.slack.action_ids import APPROVE
from testkit.api_client import ApiCaller, SseEvent
from testkit.fakes.model_server import RecordedRequest, Reply
from testkit.servers.bot_process import serve, serve_env
from testkit.servers.local_server import free_port
from worlds.api_world import CI_TOKEN, CLAUDE_TOKEN, TOKENS, top_messages
from worlds.fault_incident import ACTION_SECRET, ALICE, CHANNEL, FINISH, QUERY, ROLLBACK, incident, turn, until

API = "[api]\nenabled = true\n"


def by_steps_done(*replies: Reply):
    """The model's reply chosen by how many tool results the conversation holds: the same reply for the same point of
    the run, whichever process asks (a resumed run asks again for the turn its predecessor was waiting on)."""

    def respond(request: RecordedRequest) -> Reply:
        done = sum(1 for message in request.json["messages"] if message.get("role") == "tool")
        return replies[min(done, len(replies) - 1)]

    return respond


async def test_rest_a_whole_run_over_sse_and_the_action_waits_for_an_approvers_click(tmp_path: Path) -> None:
    async with incident(tmp_path, extra=API) as inc:
        inc.model.respond = by_steps_done(turn(QUERY), turn(ROLLBACK, thought="Why: v2.14.0 broke it."), turn(FINISH))
        async with inc.bot("one", OPSAGENT_API_TOKENS=TOKENS) as bot, ApiCaller(bot.url, CLAUDE_TOKEN) as claude:
            started = await claude.investigate("order-service 5xx since 14:02", channel=CHANNEL)
            assert started.status == 202, started
            run_id = started.json["run_id"]
            events: list[SseEvent] = []
            async for event in claude.events(run_id):
                events.append(event)
                if event.event == "approval_requested":
                    assert inc.receiver.requests == {}, "the action webhook waits for a person"
                    [opening] = top_messages(inc.slack, CHANNEL)
                    message_ts, approval_id = await until(lambda t=opening.ts: inc.approval(t), "the approval", bot)
                    assert (
                        await bot.click(inc.slack, CHANNEL, ALICE, APPROVE, approval_id, message_ts, opening.ts) == 200
                    )
            assert [(e.event, e.data.get("step")) for e in events] == [
                ("step_started", 1),
                ("step_completed", 1),
                ("step_started", 2),
                ("approval_requested", 2),
                ("approval_decided", 2),
                ("step_completed", 2),
                ("run_finished", None),
            ]
            [action] = inc.receiver.executed
            assert action["params"] == {"service": "order-service", "to_version": "v2.13.2"}
            assert events[-1].data["verdict"]["actions"][0]["approved_by"] == ALICE
            view = (await claude.investigation(run_id)).json
            assert view["status"] == "finished"
            assert (view["verdict"]["summary"], view["verdict"]["rest"]) == ("v2.14.0.", ""), "the answer, read"
            assert [step["tool"] for step in view["steps"]] == ["query_metrics", "rollback_deployment"]
            served = (await claude.call("GET", "/v1/openapi.json")).json
            assert served["paths"]["/v1/investigations"]["post"]["responses"]["202"]
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {CLAUDE_TOKEN}"}) as http,
                Client(streamable_http_client(f"{bot.url}/mcp", http_client=http)) as mcp,
            ):
                got = await mcp.call_tool("get_investigation", {"run_id": run_id})
            assert got.structured_content == view, "MCP and REST show the same investigation"


async def test_bad_input_gets_a_clear_json_refusal_and_the_server_keeps_serving(tmp_path: Path) -> None:
    async with incident(tmp_path, extra=API) as inc:
        async with (
            inc.bot("one", OPSAGENT_API_TOKENS=TOKENS) as bot,
            ApiCaller(bot.url, None) as anonymous,
            ApiCaller(bot.url, "a-token-nobody-was-given") as stranger,
            ApiCaller(bot.url, CLAUDE_TOKEN) as claude,
        ):
            for caller in (anonymous, stranger):
                refused = await caller.investigate("order-service 5xx")
                assert refused.status == 401
                assert refused.json == {
                    "ok": False,
                    "code": "unauthorized",
                    "error": "missing or unknown bearer token: send `Authorization: Bearer <token>` with a token of "
                    "[api]",
                    "retry_at": None,
                }
                assert refused.headers["WWW-Authenticate"] == 'Bearer realm="opsagent"'
                assert (await caller.investigation("anything")).status == 401, "no token: not even a 404"
            unknown = await claude.investigation("r-expired-or-never")
            assert (unknown.status, unknown.json["code"]) == (404, "not_found")

            huge = await claude.call("POST", "/v1/investigations", data=b"{" + b" " * (10 * 1024 * 1024) + b"}")
            assert (huge.status, huge.json["code"]) == (413, "body_too_large")
            broken = await claude.call("POST", "/v1/investigations", data=b'{"task": "order-service 5xx",')
            assert (broken.status, broken.json["code"]) == (400, "invalid_json")
            assert broken.json["error"].startswith("the request body is not valid JSON (")
            long_task = await claude.investigate("order-service 5xx; " * 2200)
            assert (long_task.status, long_task.json["code"]) == (422, "task_too_long")
            assert long_task.json["error"].startswith("task is 41,800 characters; the API takes at most 8,000")
            odd = await claude.call("POST", "/v1/investigations", json={"task": "x", "priority": "high"})
            assert (odd.status, odd.json["code"]) == (422, "invalid_request")
            assert "priority" in odd.json["error"]
            assert inc.slack.posted == [], "nothing refused reached Slack"
            assert (await claude.call("GET", "/v1/investigations")).json == {"investigations": []}
        assert "Traceback" not in bot.tail(200_000)


async def test_a_hundred_requests_in_a_second_meet_the_per_token_limit(tmp_path: Path) -> None:
    extra = API + "[access]\nruns_per_user_per_hour = 5\nruns_per_channel_per_hour = 1000\n"
    async with incident(tmp_path, extra=extra) as inc:
        inc.model.respond = by_steps_done(turn(FINISH))
        async with (
            inc.bot("one", OPSAGENT_API_TOKENS=TOKENS) as bot,
            ApiCaller(bot.url, CLAUDE_TOKEN) as claude,
            ApiCaller(bot.url, CI_TOKEN) as ci,
        ):
            answers = await asyncio.gather(*(claude.investigate(f"order-service 5xx #{n}") for n in range(100)))
            statuses = [answer.status for answer in answers]
            assert statuses.count(202) == 5, statuses
            assert statuses.count(429) == 95, statuses
            limited = next(answer for answer in answers if answer.status == 429)
            assert limited.json["code"] == "rate_limited"
            assert limited.json["error"].startswith("Not started: this token started 5 investigations in the last hour")
            assert 3000 <= int(limited.headers["Retry-After"]) <= 3600
            assert (await ci.investigate("payments latency")).status == 202, "another token has a limit of its own"
            mine = (await claude.call("GET", "/v1/investigations?limit=100")).json["investigations"]
            assert len(mine) == 5


async def test_an_event_stream_open_across_a_restart_resumes_from_its_last_id(tmp_path: Path) -> None:
    async with incident(tmp_path, extra=API) as inc:
        slow_query = turn(QUERY, delay=1.0)
        second = turn(dict(QUERY, id="c9"), thought="Why: once more, for payments.", delay=1.0)
        inc.model.respond = by_steps_done(slow_query, second, turn(FINISH))
        before: list[SseEvent] = []
        async with inc.bot("one", OPSAGENT_API_TOKENS=TOKENS) as one, ApiCaller(one.url, CLAUDE_TOKEN) as claude:
            run_id = (await claude.investigate("order-service 5xx", channel=CHANNEL)).json["run_id"]
            stream = claude.events(run_id)
            async for event in stream:
                before.append(event)
                if event.event == "step_completed":  # the first step is in: restart the bot under the open stream
                    break
            stopping = asyncio.create_task(one.terminate())
            with contextlib.suppress(aiohttp.ClientError):
                async for event in stream:  # the rest this process sent before it stopped, if any
                    before.append(event)
            assert await stopping == 0
        assert before[-1].event != "run_finished", "the stream ended with the process, not with the run"
        async with inc.bot("two", OPSAGENT_API_TOKENS=TOKENS) as two, ApiCaller(two.url, CLAUDE_TOKEN) as claude:
            after = await claude.whole_run(run_id, last_event_id=before[-1].id)
            whole = await claude.whole_run(run_id)
        assert [e.id for e in before] + [e.id for e in after] == [e.id for e in whole]
        assert len({e.id for e in whole}) == len(whole)
        assert [(e.event, e.data.get("step")) for e in whole] == [
            ("step_started", 1),
            ("step_completed", 1),
            ("step_started", 2),
            ("step_completed", 2),
            ("run_finished", None),
        ]
        assert whole[-1].data["status"] == "finished"


async def test_serve_refuses_to_start_the_api_without_tokens(tmp_path: Path) -> None:
    async with incident(tmp_path, extra=API) as inc:
        env = serve_env(inc.config, inc.slack, inc.model, OPSAGENT_ACTION_SECRET=ACTION_SECRET)
        process = await serve(env, free_port())
        output, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    said = output.decode()
    assert "opsagent: [api] is enabled but OPSAGENT_API_TOKENS holds no tokens" in said
    assert "Traceback" not in said
    assert json.dumps(inc.slack.posted) == "[]"
