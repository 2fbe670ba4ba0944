"""Running the Slack bot: Socket Mode (no public URL needed) or HTTP mode, until SIGTERM.

Both serve `/healthz`, `/metrics` and the components' routes (e.g. `POST /alertmanager`, `GET /runs/<id>`,
`/v1/investigations` and `/mcp` when configured) over HTTP; HTTP mode adds `POST /slack/events`. Runs are traced over OTLP when
`OTEL_EXPORTER_OTLP_ENDPOINT` is set.

On SIGTERM or SIGINT it stops taking new work, stops the runs in flight (each says so in its
thread) and exits within a bounded time.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
from collections.abc import AsyncIterator

import aiohttp
import structlog
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.alerts.receiver import serve_alertmanager
from bot.api.serve import serve_api
from bot.api.tokens import ApiTokens
from bot.app import SlackServices, create_app
from bot.http_limits.bodies import bounded_bodies
from bot.http_limits.limits import ConnectionCaps, HttpLimits
from bot.http_limits.open_files import open_file_limit, raise_open_file_limit
from bot.http_limits.site import LimitedSite, admitted_requests
from bot.runs.active import RunObserver
from bot.runs.memory import RunMemory
from bot.runs.service import AgentFactory
from bot.settings import Settings
from bot.slack.events_endpoint import PATH as SLACK_EVENTS_PATH
from bot.slack.settings import SlackSecrets
from bot.store.protocol import RunStore
from bot.telemetry.metrics import BotMetrics
from bot.telemetry.spans import spans_from_env
from bot.verification.symptoms import SymptomChecker
from bot.viewer.server import TraceViewer
from kernel import LLM, ToolRegistry
from opsagent_tools.runbooks import RunbookLibrary

log = structlog.get_logger("opsagent.serve")

DEFAULT_LIMITS = HttpLimits()
SHUTDOWN_TIMEOUT_S = 20.0
"""How long runs in flight get to say goodbye in their threads before the process exits."""
DEFAULT_SLACK_API = "https://slack.com/api/"


class SlackUnavailableError(ConnectionError):
    """Slack cannot be used at start-up: unreachable, or it refused a token. The message says what to check."""


@contextlib.asynccontextmanager
async def talking_to_slack(what: str, token_variable: str, api_url: str | None) -> AsyncIterator[None]:
    """Turn Slack's refusal or silence during `what` into one `SlackUnavailableError` line naming what to check."""
    try:
        yield
    except SlackApiError as exc:
        error = exc.response.get("error", "error") if exc.response is not None else "error"
        raise SlackUnavailableError(
            f"Slack refused {what} ({error}): check {token_variable} (the app's token, from api.slack.com/apps)"
        ) from None
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        where = api_url or DEFAULT_SLACK_API
        reason = str(exc) or type(exc).__name__
        raise SlackUnavailableError(
            f"cannot reach Slack at {where} during {what} ({reason}): check the network, a proxy, or SLACK_API_URL"
        ) from None


async def serve_slack(
    settings: Settings,
    secrets: SlackSecrets,
    agent_factory: AgentFactory,
    *,
    tools: ToolRegistry,
    store: RunStore,
    http: bool,
    host: str,
    port: int,
    runbooks: RunbookLibrary | None = None,
    memory: RunMemory | None = None,
    drafter: LLM | None = None,
    symptoms: SymptomChecker | None = None,
) -> None:
    """Serve until a termination signal, then shut down gracefully (runs in flight are saved for the next start).

    `tools` are the ones `agent_factory` gives its agents: the metrics label only those. `runbooks`: the library
    the tools search, whose runbooks are named to the model at the start of each run. `memory`: the memory of past
    incidents the tools search, which remembers each run as it finishes. `drafter`: the model that writes the
    narrative of postmortem and status drafts. `symptoms`: what reads a symptom again to check an approved action
    (`[verification]`)."""
    prices = settings.llm.prices if settings.llm is not None else {}
    viewer = (
        TraceViewer.from_settings(settings.viewer, store.runs, store.audit, priced=prices)
        if settings.viewer is not None
        else None
    )
    metrics = BotMetrics(tools=tools)
    spans = spans_from_env(settings.llm.provider if settings.llm else "openai")
    observers: list[RunObserver] = [metrics, *([spans] if spans else [])]
    if http and secrets.signing_secret is None:
        raise ValueError("HTTP mode needs SLACK_SIGNING_SECRET to verify that requests come from Slack")
    if not http and secrets.app_token is None:
        raise ValueError("Socket Mode needs SLACK_APP_TOKEN (an xapp- token with connections:write), or use --http")
    api_tokens = ApiTokens.from_env(settings.api) if settings.api.enabled else None  # before Slack: fail fast
    async with talking_to_slack("the bot token (auth.test)", "SLACK_BOT_TOKEN", secrets.api_url):
        services = await create_app(
            settings.slack,
            secrets,
            agent_factory,
            store=store,
            lease_ttl_s=settings.store.lease_ttl_s,
            access=settings.access,
            observers=observers,
            trace_link=viewer.link if viewer else None,
            runbooks=runbooks,
            memory=memory,
            drafter=drafter,
            quiet_approvals=settings.api.approval_channel if api_tokens is not None else "",
            verification=settings.verification,
            symptoms=symptoms,
        )
    metrics.attach(services)
    services.routes.extend(viewer.routes() if viewer else ())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if settings.alertmanager is not None:
        serve_alertmanager(settings.alertmanager, services)
    if api_tokens is not None:
        serve_api(settings.api, services, api_tokens, viewer.link if viewer else None)
    files = raise_open_file_limit()
    log.info("open_file_limit", soft=files.soft, hard=files.hard, raised_from=files.was, error=files.error)
    runner = await start_http(services, host, port, slack_events=http)
    await services.start()
    handler = None if http or secrets.app_token is None else socket_mode_handler(services, secrets.app_token)
    if handler is not None:
        try:
            async with talking_to_slack(
                "the app-level token (apps.connections.open)", "SLACK_APP_TOKEN", secrets.api_url
            ):
                await handler.connect_async()
        except SlackUnavailableError:
            await services.close(timeout_s=SHUTDOWN_TIMEOUT_S)
            await runner.cleanup()
            raise
    log.info("serving", transport="socket_mode" if handler else "http", host=host, port=port)
    await stop.wait()
    await services.close(timeout_s=SHUTDOWN_TIMEOUT_S)
    if handler is not None:
        await handler.close_async()
    await runner.cleanup()
    if spans is not None:
        await asyncio.to_thread(spans.close)


def socket_mode_handler(
    services: SlackServices, app_token: str, *, web_client: AsyncWebClient | None = None
) -> AsyncSocketModeHandler:
    """The Socket Mode connection; `apps.connections.open` goes through `web_client`, by default the app's client."""
    return AsyncSocketModeHandler(services.app, app_token, web_client=web_client)


async def start_http(
    services: SlackServices, host: str, port: int, *, slack_events: bool = True, limits: HttpLimits = DEFAULT_LIMITS
) -> web.AppRunner:
    """`GET /healthz` and the components' routes on aiohttp, plus `POST /slack/events` (events and
    interactivity) in HTTP mode; in Socket Mode the same server answers health checks and the rest.

    Every request is held to `limits` (head and body read timeouts, body sizes, connection caps that fit the
    process's open-file limit, a share for each client address apart from health probes and Slack's requests)."""
    biggest = max([limits.body_bytes, *services.body_limits.values()])
    middlewares = [
        admitted_requests(SLACK_EVENTS_PATH if slack_events else None),
        bounded_bodies(limits, services.body_limits),
    ]
    app = web.Application(client_max_size=biggest, middlewares=middlewares)
    if slack_events:
        app.router.add_post(SLACK_EVENTS_PATH, services.events.handle)
    app.router.add_get("/healthz", _healthz)
    app.add_routes(services.routes)
    runner = web.AppRunner(app, keepalive_timeout=limits.idle_timeout_s, lingering_time=limits.drain_s)
    await runner.setup()
    open_files = open_file_limit()
    caps = ConnectionCaps.within(limits, open_files)
    log.info("http_connection_caps", open_files=open_files, **dataclasses.asdict(caps))
    await LimitedSite(runner, host, port, limits, caps).start()
    return runner


async def _healthz(_: web.Request) -> web.Response:
    return web.json_response({"ok": True})
