"""Side-effect actions against a real HTTP receiver on 127.0.0.1: signature, idempotency, dry run, failures."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json

import pytest
from aiohttp import web

from kernel import (
    Agent,
    Approved,
    CallContext,
    ErrorKind,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    ToolCall,
    ToolFailure,
    ToolRegistry,
    text_turn,
)
from opsagent_tools.actions import (
    ActionWebhook,
    ActionWebhookSettings,
    InMemoryActionJournal,
    SideEffectState,
    action_tools,
)
from opsagent_tools.actions.webhook import IDEMPOTENCY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, idempotency_key
from worlds.dispatch import dispatch_call

SECRET = b"s3cr3t-hmac-key"
ROLLBACK = text_turn("rollback_deployment", "Why: v2.14.0 broke it.", service="order-service", to_version="v2.13.2")
FINISH = text_turn("finish", answer="done")


class Receiver:
    """An action receiver that verifies signatures the way an operator's service would."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.status = 200
        self.delay = 0.0
        self.hang_up = False
        """Drop the connection after reading the request, as a crashing receiver or a broken proxy would."""

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.requests.append((dict(request.headers), body))
        await asyncio.sleep(self.delay)
        if self.hang_up:
            assert request.transport is not None
            request.transport.abort()
        expected = hmac.new(SECRET, request.headers[TIMESTAMP_HEADER].encode() + b"." + body, hashlib.sha256)
        if not hmac.compare_digest(request.headers[SIGNATURE_HEADER], f"sha256={expected.hexdigest()}"):
            return web.Response(status=401, text="bad signature")
        return web.Response(status=self.status, text=f'{{"status": "queued", "code": {self.status}}}')


@pytest.fixture
async def receiver():
    rx = Receiver()
    app = web.Application()
    app.router.add_post("/hooks/actions", rx.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    rx.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/hooks/actions"
    yield rx
    await runner.cleanup()


def tools_for(url: str, *, secret: bytes = SECRET, timeout: float = 5.0) -> ToolRegistry:
    settings = ActionWebhookSettings(url=url, timeout_s=timeout, headers={"X-Team": "sre"})
    return ToolRegistry(action_tools(ActionWebhook(settings, secret=secret)))


def approve(request):
    return Approved(by="U_ALICE", args_hash=request.args_hash)


async def run(tools, policy, confirm=None):
    model = ScriptedModel([ROLLBACK, FINISH])
    result = await Agent(llm=model, tools=tools, policy=policy, confirm=confirm).run("roll back order-service")
    model.assert_complete()
    return result


async def test_approved_rollback_is_signed_and_carries_an_idempotency_key(receiver):
    async def confirm(request):
        return approve(request)

    result = await run(tools_for(receiver.url), SideEffectPolicy(mode=SideEffectMode.FULL), confirm)
    headers, body = receiver.requests[0]
    sent = json.loads(body)
    assert sent["action"] == "rollback_deployment"
    assert sent["params"] == {"service": "order-service", "to_version": "v2.13.2"}
    assert sent["run_id"] == result.run_id
    assert headers[IDEMPOTENCY_HEADER] == sent["idempotency_key"]
    assert headers["X-Team"] == "sre"
    assert result.steps[0].observation.startswith("accepted by the action webhook (HTTP 200, Idempotency-Key ")
    assert result.steps[0].approval.by == "U_ALICE"
    assert result.steps[0].headline == "rollback order-service → v2.13.2: webhook 200"


async def test_dry_run_shows_exactly_what_would_be_sent_and_sends_nothing(receiver):
    result = await run(tools_for(receiver.url), SideEffectPolicy(mode=SideEffectMode.DRY_RUN))
    assert receiver.requests == []
    obs = result.steps[0].observation
    assert obs.startswith("[DryRun] Not executed (policy: dry_run). Would do: ")
    shown = json.loads(obs.split("Would do: ", 1)[1])
    assert shown["method"] == "POST"
    assert shown["url"] == receiver.url
    assert shown["body"]["params"] == {"service": "order-service", "to_version": "v2.13.2"}
    assert shown["headers"][SIGNATURE_HEADER] == "<sha256 HMAC, computed when sent>"
    key = idempotency_key(CallContext(run_id=result.run_id, step=1, call=result.steps[0].call))
    assert shown["headers"][IDEMPOTENCY_HEADER] == key
    assert result.steps[0].headline == "dry run: rollback order-service → v2.13.2 (not sent)"


async def test_without_approval_nothing_is_sent(receiver):
    result = await run(tools_for(receiver.url), SideEffectPolicy(mode=SideEffectMode.FULL))
    assert receiver.requests == []
    assert result.steps[0].error is ErrorKind.DENIED


async def test_receiver_refusal_is_reported_as_not_run(receiver):
    receiver.status = 409

    async def confirm(request):
        return approve(request)

    result = await run(tools_for(receiver.url), SideEffectPolicy(mode=SideEffectMode.FULL), confirm)
    assert result.steps[0].observation == (
        "[ToolError] exception: 'rollback_deployment' failed: the action webhook refused the action (HTTP 409): "
        '{"status": "queued", "code": 409}. It did not run. Tell the user what the receiver said.'
    )
    assert result.steps[0].headline == "", "the step's error shows instead"


async def test_a_restart_reads_as_its_status_and_a_repeat_as_already_done(receiver):
    receiver.status = 202
    tools, full = tools_for(receiver.url), SideEffectPolicy(mode=SideEffectMode.FULL)

    async def confirm(request):
        return approve(request)

    first = await dispatch_call(tools, "restart_service", policy=full, confirm=confirm, service="order-service")
    again = await dispatch_call(tools, "restart_service", policy=full, confirm=confirm, service="order-service")
    assert (first.headline, again.headline) == (
        "restart order-service: webhook 202",
        "restart order-service: already done (not sent again)",
    )
    assert len(receiver.requests) == 1
    dry = SideEffectPolicy(mode=SideEffectMode.DRY_RUN)
    preview = await dispatch_call(tools, "restart_service", policy=dry, service="order-service")
    assert preview.headline == "dry run: restart order-service (not sent)"


async def test_a_wrong_secret_is_refused_by_the_receiver(receiver):
    async def confirm(request):
        return approve(request)

    result = await run(tools_for(receiver.url, secret=b"wrong"), SideEffectPolicy(mode=SideEffectMode.FULL), confirm)
    assert "refused the action (HTTP 401): bad signature" in result.steps[0].observation


async def test_receiver_timeout_says_the_outcome_is_unknown(receiver):
    receiver.delay = 5  # the request is sent (the connection is up well within the timeout), then no answer comes

    async def confirm(request):
        return approve(request)

    result = await run(tools_for(receiver.url, timeout=1.5), SideEffectPolicy(mode=SideEffectMode.FULL), confirm)
    obs = result.steps[0].observation
    assert "did not answer within 1.5 s, so the action may or may not have run" in obs
    assert f"Idempotency-Key {receiver.requests[0][0][IDEMPOTENCY_HEADER]}" in obs


async def test_unreachable_receiver_means_not_run():
    async def confirm(request):
        return approve(request)

    result = await run(tools_for("http://127.0.0.1:9/hooks"), SideEffectPolicy(mode=SideEffectMode.FULL), confirm)
    assert "cannot reach the action webhook at http://127.0.0.1:9/hooks" in result.steps[0].observation
    assert "the action did not run" in result.steps[0].observation


def test_the_same_call_of_the_same_run_keeps_its_key():
    call = ToolCall(name="restart_service", args={"service": "a"})
    one = idempotency_key(CallContext(run_id="r1", step=3, call=call))
    assert one == idempotency_key(
        CallContext(run_id="r1", step=3, call=ToolCall(name="restart_service", args={"service": "a"}))
    )
    assert one != idempotency_key(CallContext(run_id="r2", step=3, call=call))
    assert one != idempotency_key(
        CallContext(run_id="r1", step=3, call=ToolCall(name="restart_service", args={"service": "b"}))
    )


def test_a_missing_secret_is_a_configuration_error():
    settings = ActionWebhookSettings(url="http://x", secret_env="NO_SUCH_SECRET_VAR")
    with pytest.raises(ValueError, match="set NO_SUCH_SECRET_VAR"):
        ActionWebhook.from_env(settings, environ={})


# --- exactly once: the journal ------------------------------------------------------------------------------

RESTART = ToolCall(name="restart_service", args={"service": "order-service"})
RESTART_CTX = CallContext(run_id="r1", step=4, call=RESTART)


def webhook_for(url: str, journal: InMemoryActionJournal, *, timeout: float = 5.0) -> ActionWebhook:
    return ActionWebhook(ActionWebhookSettings(url=url, timeout_s=timeout), secret=SECRET, journal=journal)


async def send_restart(webhook: ActionWebhook) -> str:
    sent = await webhook.send(
        webhook.prepare("restart_service", {"service": "order-service"}, RESTART_CTX), RESTART_CTX
    )
    return sent.outcome


async def test_an_action_already_done_is_not_sent_again(receiver):
    journal = InMemoryActionJournal()
    first = await send_restart(webhook_for(receiver.url, journal))
    again = await send_restart(webhook_for(receiver.url, journal))  # e.g. the same run resumed elsewhere
    assert len(receiver.requests) == 1
    key = idempotency_key(RESTART_CTX)
    assert again == f"already done earlier in this run (Idempotency-Key {key}); not sent again. {first}"


async def test_an_action_whose_outcome_was_lost_is_resent_with_the_same_key_and_says_so(receiver):
    journal = InMemoryActionJournal()
    key = idempotency_key(RESTART_CTX)
    await journal.begin(key, run_id="r1", step=4, tool="restart_service", args_hash=RESTART_CTX.args_hash)
    # ... and the process died before recording the outcome.
    outcome = await send_restart(webhook_for(receiver.url, journal))
    assert outcome.startswith("re-sent after an interruption with the same Idempotency-Key (the receiver de-dup")
    assert [headers[IDEMPOTENCY_HEADER] for headers, _ in receiver.requests] == [key]
    assert journal.entry(key).state is SideEffectState.DONE


async def test_a_refused_action_is_journalled_failed_and_may_be_tried_again(receiver):
    journal = InMemoryActionJournal()
    receiver.status = 503
    with pytest.raises(ToolFailure, match="refused the action"):
        await send_restart(webhook_for(receiver.url, journal))
    key = idempotency_key(RESTART_CTX)
    assert journal.entry(key).state is SideEffectState.FAILED
    receiver.status = 200
    assert (await send_restart(webhook_for(receiver.url, journal))).startswith("accepted by the action webhook")
    assert len(receiver.requests) == 2
    assert journal.entry(key).state is SideEffectState.DONE


async def test_a_timed_out_action_stays_in_doubt_and_is_resent_with_its_key(receiver):
    journal = InMemoryActionJournal()
    receiver.delay = 2
    with pytest.raises(ToolFailure, match="may or may not have run"):
        await send_restart(webhook_for(receiver.url, journal, timeout=0.2))
    key = idempotency_key(RESTART_CTX)
    assert journal.entry(key).state is SideEffectState.EXECUTING
    receiver.delay = 0
    assert (await send_restart(webhook_for(receiver.url, journal))).startswith("re-sent after an interruption")
    assert [headers[IDEMPOTENCY_HEADER] for headers, _ in receiver.requests] == [key, key]


async def test_a_connection_that_breaks_after_the_request_left_keeps_the_action_in_doubt(receiver):
    journal = InMemoryActionJournal()
    receiver.hang_up = True
    with pytest.raises(ToolFailure, match="may or may not have run"):
        await send_restart(webhook_for(receiver.url, journal))
    key = idempotency_key(RESTART_CTX)
    assert journal.entry(key).state is SideEffectState.EXECUTING  # not "did not run": it may have
    receiver.hang_up = False
    assert (await send_restart(webhook_for(receiver.url, journal))).startswith("re-sent after an interruption")
    assert [headers[IDEMPOTENCY_HEADER] for headers, _ in receiver.requests] == [key, key]
