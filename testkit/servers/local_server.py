"""The lifecycle every fake server in the tests shares: aiohttp on a free 127.0.0.1 port, as a context manager.

Subclasses add their routes in `routes`; a delayed reply waits on `_closing`, so closing never hangs.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Self

from aiohttp import web


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago, for servers that must be told theirs up front."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """A real HTTP server on loopback for the tests; `url` is known once started."""

    shutdown_timeout = 1.0

    def __init__(self) -> None:
        self.port = 0
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        """Add the server's routes."""
        raise NotImplementedError

    async def start(self) -> None:
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=self.shutdown_timeout)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]

    async def close(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
