"""A real MCP server for the tests, written with the SDK (MCPServer, formerly FastMCP): an incident tracker's tools,
plus tools that misbehave on purpose (an error result, a crash mid-call, a hang), over stdio or streamable HTTP.

Run it as `python mcp_ops_server.py [--extra N] [--page-size N] [--http PORT --token T] [--fail-start]
[--refuse-restart FILE]`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    EmbeddedResource,
    ImageContent,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

READS = ToolAnnotations(read_only_hint=True)
PNG_BYTES = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


class PagedServer(MCPServer):
    """Lists its tools `page_size` at a time, with a cursor, as large servers do."""

    def __init__(self, page_size: int) -> None:
        super().__init__("ops-tracker")
        self.page_size = page_size

    async def _handle_list_tools(self, ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        tools = await self.list_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + self.page_size
        return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)


def build(page_size: int, extra: int) -> MCPServer:
    server = PagedServer(page_size)

    @server.tool(annotations=READS)
    def recent_incidents(service: str, limit: int = 3) -> str:
        """The service's most recent incidents in the tracker, newest first."""
        incidents = [f"INC-{100 + i} {service}: elevated 5xx after deploy v2.{14 - i}.0" for i in range(limit)]
        return "\n".join(incidents)

    @server.tool(annotations=READS)
    def service_status(service: str) -> dict[str, Any]:
        """The tracker's status of a service, as structured data."""
        return {"service": service, "status": "degraded", "open_incidents": 2}

    @server.tool()
    def fail_loudly(reason: str) -> str:
        """Always fails, with the reason (an isError result)."""
        raise ToolError(f"tracker refused: {reason}")

    @server.tool()
    def crash() -> str:
        """Crashes the server in the middle of the call."""
        print("fatal: crash requested by the test", file=sys.stderr, flush=True)
        os._exit(3)

    @server.tool()
    async def hang(seconds: float = 3600) -> str:
        """Takes `seconds` to answer."""
        await anyio.sleep(seconds)
        return "finally"

    @server.tool(annotations=READS)  # a lie: it writes; only the operator's read_only list counts
    def add_note(service: str, text: str) -> str:
        """Adds a note to the service's open incident."""
        with open(os.environ["OPS_NOTES_FILE"], "a", encoding="utf-8") as notes:
            notes.write(f"{service}: {text}\n")
        return f"note added to {service}'s incident"

    @server.tool(annotations=READS)
    def snapshot(service: str) -> list[Any]:
        """A dashboard snapshot: a caption, an image and the panel's data as a resource."""
        return [
            TextContent(text=f"{service} latency dashboard"),
            ImageContent(data=PNG_BYTES, mime_type="image/png"),
            EmbeddedResource(
                resource=TextResourceContents(uri=f"tracker://{service}/p99", mime_type="text/csv", text="t,p99\n0,1.2")
            ),
        ]

    @server.tool(annotations=READS)
    def whoami() -> str:
        """Which token the server was started with."""
        return f"token in use: {os.environ.get('OPS_TOKEN', '(none)')}"

    for i in range(extra):
        topic = f"topic{i}"

        def extra_tool(query: str, topic: str = topic) -> str:
            return f"{topic} answers {query}"

        server.add_tool(extra_tool, name=f"lookup_{topic}", description=f"Looks up {topic} records by query.")
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--extra", type=int, default=0)
    parser.add_argument("--page-size", type=int, default=4)
    parser.add_argument("--http", type=int, default=0, help="serve streamable HTTP on this port instead of stdio")
    parser.add_argument("--token", default="", help="with --http: the bearer token every request must carry")
    parser.add_argument("--fail-start", action="store_true", help="exit at once, as a misconfigured server does")
    parser.add_argument("--refuse-restart", default="", help="the first start creates this file; later ones fail")
    args = parser.parse_args()
    if args.refuse_restart and os.path.exists(args.refuse_restart):
        print("error: the tracker's database is gone", file=sys.stderr, flush=True)
        sys.exit(2)
    if args.refuse_restart:
        open(args.refuse_restart, "w").close()
    if args.fail_start:
        print("error: TRACKER_URL is not set", file=sys.stderr, flush=True)
        sys.exit(2)
    server = build(args.page_size, args.extra)
    if not args.http:
        server.run()
        return
    import uvicorn
    from starlette.responses import PlainTextResponse

    app = server.streamable_http_app()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {args.token}".encode():
            await PlainTextResponse("unauthorised", status_code=401)(scope, receive, send)
            return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=args.http, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
