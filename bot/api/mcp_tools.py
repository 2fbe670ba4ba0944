"""The MCP server: the API's operations as tools, written with the official SDK (`MCPServer`, formerly FastMCP).

Each tool answers with text for the model and the API's JSON shape as structured content. Who calls is the token's
name the HTTP door put on the request (`bot.api.mcp_door`); a refusal is a tool error in words for the model. No
tool approves: approvals stay with people in Slack (or the terminal), and the descriptions say so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Annotated, TypeVar

import structlog
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from bot.api import shapes
from bot.api.events import EventKind, RunEvent
from bot.api.problems import ApiProblem
from bot.api.runs import MAX_LIST, ApiRuns
from bot.api.settings import MAX_TASK_CHARS
from bot.api.views import verdict_text
from bot.gate.gate import GUIDANCE_CHARS
from bot.store.protocol import StoreUnavailableError

log = structlog.get_logger("opsagent.api")

MAX_WAIT_S = 300.0
NO_APPROVING = (
    "No tool approves anything: side effects wait for a person's Approve in Slack (the run's thread, or the approval "
    "channel), and a run posted in no channel without an approval channel has its side effects denied."
)
INSTRUCTIONS = (
    "OpsAgent investigates production incidents: it reads metrics, logs, code, Kubernetes and runbooks, and answers "
    "with a verdict whose every claim cites the steps that back it. Start with `investigate`, then "
    "`wait_for_investigation` (it reports each step as progress) or `get_investigation`. " + NO_APPROVING
)
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
T = TypeVar("T")


class Waited(BaseModel):
    """What `wait_for_investigation` saw: the investigation, and whether it ended while waiting."""

    ended: bool
    investigation: shapes.Investigation


def client_of(ctx: Context) -> str:
    """The API client calling: the token's name the HTTP door put on the request."""
    request = ctx.request_context.request
    user = request.scope.get("user") if request is not None else None
    if not isinstance(user, AuthenticatedUser):  # the door lets no request through without one
        raise ToolError("this request carries no API client: send `Authorization: Bearer <token>`")
    return str(user.username)


def _answer(text: str, shape: BaseModel) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=shape.model_dump(mode="json")
    )


async def _checked(call: Awaitable[T | ApiProblem]) -> T:
    """What the API answered; its refusal, or a run store out of reach, as a tool error the model reads."""
    try:
        outcome = await call
    except StoreUnavailableError:
        raise ToolError("OpsAgent cannot reach its run store just now: try again in a moment") from None
    if isinstance(outcome, ApiProblem):
        raise ToolError(outcome.message)
    return outcome


def mcp_server(api: ApiRuns) -> MCPServer:
    """The server, its tools calling `api` for the client each request names."""
    server = MCPServer("opsagent", instructions=INSTRUCTIONS, version="1")

    @server.tool(
        description=f"Start an OpsAgent investigation of `task` ({MAX_TASK_CHARS:,} characters at most), "
        "posted in the Slack channel `channel` (C…) when given, where people can follow, steer, stop and "
        f"approve it. Returns its run_id and links. {NO_APPROVING}"
    )
    async def investigate(
        task: Annotated[str, Field(min_length=1, max_length=MAX_TASK_CHARS)],
        ctx: Context,
        channel: Annotated[str | None, Field(pattern=r"^[CG][A-Z0-9]{2,30}$")] = None,
    ) -> Annotated[CallToolResult, shapes.Started]:
        started = await _checked(api.investigate(client_of(ctx), task, channel))
        where = f" Its thread: {started.thread}." if started.thread else ""
        return _answer(f"Started investigation {started.run_id}.{where}", started)

    @server.tool(
        annotations=READS,
        description="An investigation you started: its status, its steps in a line each, "
        f"and its verdict once it has ended. {NO_APPROVING}",
    )
    async def get_investigation(run_id: str, ctx: Context) -> Annotated[CallToolResult, shapes.Investigation]:
        view = await _checked(api.investigation(client_of(ctx), run_id))
        return _answer(verdict_text(view), view)

    @server.tool(
        annotations=READS,
        description="Wait until an investigation you started ends, or `timeout_s` "
        f"(at most {MAX_WAIT_S:g}) passes, reporting each step as progress; then its status, steps and "
        f"verdict. Call it again if it is still running. {NO_APPROVING}",
    )
    async def wait_for_investigation(
        run_id: str, ctx: Context, timeout_s: Annotated[float, Field(gt=0, le=MAX_WAIT_S)] = 120.0
    ) -> Annotated[CallToolResult, Waited]:
        steps = 0

        async def progress(event: RunEvent) -> None:
            nonlocal steps
            if event.kind is EventKind.STEP_COMPLETED:
                steps += 1
                await ctx.report_progress(steps, None, str(event.data.get("line", "")))

        client = client_of(ctx)
        try:
            view, ended = await _checked(api.wait(client, run_id, timeout_s, progress))
        except asyncio.CancelledError:  # the client hung up: the run goes on, only the wait ends
            log.info("mcp_wait_abandoned", run_id=run_id, client=client)
            raise
        still = "" if ended else f"Still {view.status} after {timeout_s:g} s: call wait_for_investigation again.\n"
        return _answer(still + verdict_text(view), Waited(ended=ended, investigation=view))

    @server.tool(
        description='Tell a running investigation you started something it should know ("payments deployed '
        f'at 14:02"), {GUIDANCE_CHARS:,} characters at most: it reaches the model with its next request, as '
        f"guidance from its Slack thread would. {NO_APPROVING}"
    )
    async def add_guidance(
        run_id: str, text: Annotated[str, Field(min_length=1, max_length=GUIDANCE_CHARS)], ctx: Context
    ) -> Annotated[CallToolResult, shapes.GuidanceKept]:
        kept = await _checked(api.guide(client_of(ctx), run_id, text))
        return _answer(f"Kept as guidance #{kept.seq} for investigation {kept.run_id}.", kept)

    @server.tool(
        annotations=READS,
        description=f"The investigations you started, newest first ({MAX_LIST} at most). {NO_APPROVING}",
    )
    async def list_investigations(
        ctx: Context, limit: Annotated[int, Field(ge=1, le=MAX_LIST)] = 20
    ) -> Annotated[CallToolResult, shapes.Investigations]:
        listed = await _checked(api.investigations(client_of(ctx), limit))
        lines = [
            f"{i.run_id} {i.status} {i.created_at:%Y-%m-%d %H:%M} UTC: {i.task[:120]}" for i in listed.investigations
        ]
        return _answer("\n".join(lines) or "No investigations started with this token yet.", listed)

    return server
