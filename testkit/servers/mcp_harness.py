"""What the MCP tests share: the test servers' commands, settings for them, and the server over streamable HTTP.

The servers are `mcp_ops_server.py` and `mcp_hostile_server.py`, real MCP servers built with the SDK, each
started as its own process.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from opsagent_tools.mcp import McpServerSettings
from testkit.servers.local_server import free_port

OPS_SERVER = Path(__file__).with_name("mcp_ops_server.py")
HOSTILE_SERVER = Path(__file__).with_name("mcp_hostile_server.py")
READ_ONLY = ["recent_incidents", "service_status", "snapshot", "whoami"]
TOKEN = "tracker-token-7f3a9c"


def stdio_settings(*server_args: str, **fields: Any) -> McpServerSettings:
    """The test server over stdio, run by this Python; its reads listed as read-only unless `fields` say otherwise."""
    return McpServerSettings(
        command=sys.executable,
        args=[str(OPS_SERVER), *server_args],
        **{"read_only": READ_ONLY, "env": ["OPS_TOKEN", "OPS_NOTES_FILE"], "timeout_s": 5.0, **fields},
    )


def hostile_settings(**fields: Any) -> McpServerSettings:
    """The hostile server over stdio; its `lookup_runbook` listed as read-only unless `fields` say otherwise."""
    return McpServerSettings(
        command=sys.executable,
        args=[str(HOSTILE_SERVER)],
        **{"read_only": ["lookup_runbook"], "timeout_s": 5.0, **fields},
    )


@contextlib.asynccontextmanager
async def http_server(port: int | None = None, token: str = TOKEN) -> AsyncIterator[str]:
    """The test server over streamable HTTP on 127.0.0.1, requiring `Authorization: Bearer <token>`; yields its URL."""
    port = port or free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(OPS_SERVER), "--http", str(port), "--token", token,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        async with asyncio.timeout(20):
            while True:
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    await asyncio.sleep(0.05)
                    continue
                writer.close()
                break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
