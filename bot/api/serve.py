"""The API on `serve`'s HTTP listener: its REST routes and `/mcp`, wired to the Slack app's services, and its tasks
(the progress subscription, the MCP server) started and closed with them."""

from __future__ import annotations

import structlog

from bot.api.mcp_door import McpDoor
from bot.api.mcp_tools import mcp_server
from bot.api.rest import RestApi
from bot.api.runs import ApiRuns
from bot.api.settings import ApiSettings
from bot.api.tokens import ApiTokens
from bot.api.views import Links
from bot.api.wakeups import Wakeups
from bot.app import SlackServices
from bot.slack.run_thread import TraceLink

log = structlog.get_logger("opsagent.api")


class ApiServer:
    """The API's doors and their shared tasks; a `Door` of the Slack services."""

    def __init__(
        self, settings: ApiSettings, services: SlackServices, tokens: ApiTokens, trace_link: TraceLink | None
    ) -> None:
        self.wakeups = Wakeups(services.store.topics)
        self.runs = ApiRuns(
            gate=services.gate,
            investigations=services.investigations,
            runs=services.store.runs,
            outbox=services.outbox,
            wakeups=self.wakeups,
            links=Links(trace_link, services.workspace_url),
            channel=settings.channel,
        )
        self.rest = RestApi(self.runs, tokens)
        self.mcp = McpDoor(mcp_server(self.runs), tokens)
        self._clients = tokens.names

    async def start(self) -> None:
        """Follow the runs' progress, and start the MCP server."""
        await self.wakeups.start()
        await self.mcp.start()
        log.info("api_serving", clients=list(self._clients))

    async def close(self) -> None:
        """End the event streams (their clients reconnect elsewhere) and the MCP calls in progress."""
        await self.wakeups.close()
        await self.mcp.close()


def serve_api(
    settings: ApiSettings, services: SlackServices, tokens: ApiTokens, trace_link: TraceLink | None = None
) -> ApiServer:
    """Add the API's routes to the bot's HTTP server, for the clients `tokens` names (`ApiTokens.from_env`, which
    refuses an `[api]` without tokens), and its tasks to the services."""
    server = ApiServer(settings, services, tokens, trace_link)
    services.routes += [*server.rest.routes(), *server.mcp.routes()]
    services.doors.append(server)
    return server
