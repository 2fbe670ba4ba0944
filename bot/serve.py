"""Running the Slack bot: Socket Mode (no public URL needed) or HTTP mode, until SIGTERM.

On SIGTERM or SIGINT it stops taking new work, stops the runs in flight (each says so in its
thread) and exits within a bounded time.
"""

from __future__ import annotations

import asyncio
import signal

import structlog
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.investigations import AgentFactory
from bot.settings import Settings
from bot.slack_app import SlackSecrets, SlackServices, create_app

log = structlog.get_logger("opsagent.serve")

SHUTDOWN_TIMEOUT_S = 20.0
"""How long runs in flight get to say goodbye in their threads before the process exits."""


async def serve_slack(
    settings: Settings, secrets: SlackSecrets, agent_factory: AgentFactory, *, http: bool, host: str, port: int
) -> None:
    """Serve until a termination signal, then shut down gracefully."""
    services = await create_app(settings.slack, secrets, agent_factory)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if http:
        if secrets.signing_secret is None:
            raise ValueError("HTTP mode needs SLACK_SIGNING_SECRET to verify that requests come from Slack")
        runner = await start_http(services, host, port)
        log.info("serving_http", host=host, port=port, path="/slack/events")
        await stop.wait()
        await services.investigations.shutdown(timeout_s=SHUTDOWN_TIMEOUT_S)
        await runner.cleanup()
        return
    if secrets.app_token is None:
        raise ValueError("Socket Mode needs SLACK_APP_TOKEN (an xapp- token with connections:write), or use --http")
    handler = socket_mode_handler(services, secrets.app_token)
    await handler.connect_async()
    log.info("serving_socket_mode")
    await stop.wait()
    await services.investigations.shutdown(timeout_s=SHUTDOWN_TIMEOUT_S)
    await handler.close_async()


def socket_mode_handler(
    services: SlackServices, app_token: str, *, web_client: AsyncWebClient | None = None
) -> AsyncSocketModeHandler:
    """The Socket Mode connection; `apps.connections.open` goes through `web_client`, by default the app's client."""
    return AsyncSocketModeHandler(services.app, app_token, web_client=web_client)


async def start_http(services: SlackServices, host: str, port: int) -> web.AppRunner:
    """`POST /slack/events` (events and interactivity), `GET /healthz` and the components' routes, on aiohttp."""
    app = services.app.web_app(path="/slack/events")
    app.router.add_get("/healthz", _healthz)
    app.add_routes(services.routes)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner


async def _healthz(_: web.Request) -> web.Response:
    return web.json_response({"ok": True})
