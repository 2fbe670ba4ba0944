"""What the MCP tests share: the test server's command, settings for it, and the server over streamable HTTP.

The server is `mcp_ops_server.py`, a real MCP server built with the SDK, started as its own process.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from local_server import free_port

from kernel import (
    DEFAULT_REDACTOR,
    CallContext,
    ConfirmHook,
    Dispatcher,
    DispatchResult,
    RunControl,
    SideEffectPolicy,
    ToolCall,
    ToolRegistry,
)
from opsagent_tools.mcp import McpServerSettings

OPS_SERVER = Path(__file__).with_name("mcp_ops_server.py")
READ_ONLY = ["recent_incidents", "service_status", "snapshot", "whoami"]
TOKEN = "tracker-token-7f3a9c"


def stdio_settings(*server_args: str, **fields: Any) -> McpServerSettings:
    """The test server over stdio, run by this Python; its reads listed as read-only unless `fields` say otherwise."""
    return McpServerSettings(
        command=sys.executable,
        args=[str(OPS_SERVER), *server_args],
        **{"read_only": READ_ONLY, "env": ["OPS_TOKEN", "OPS_NOTES_FILE"], "timeout_s": 5.0, **fields},
    )


async def dispatch(
    registry: ToolRegistry,
    name: str,
    *,
    policy: SideEffectPolicy | None = None,
    confirm: ConfirmHook | None = None,
    control: RunControl | None = None,
    **args: Any,
) -> DispatchResult:
    """One call through the kernel's dispatch, as a run makes it."""
    dispatcher = Dispatcher(
        registry,
        policy=policy or SideEffectPolicy(),
        confirm=confirm,
        redactor=DEFAULT_REDACTOR,
        control=control or RunControl(),
    )
    call = ToolCall(name=name, args=args)
    return await dispatcher.dispatch(call, CallContext(run_id="test", step=1, call=call))


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
