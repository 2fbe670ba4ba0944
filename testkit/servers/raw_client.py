"""Raw TCP clients of an HTTP server, for the tests of what a slow or half-sent request gets: a socket from a chosen
loopback address (Linux routes all of 127.0.0.0/8 to the loopback, so each is a client address of its own), the
heads such clients stop half-way through, and everything the server answers before it closes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

PATIENCE_S = 15.0
"""How long a test waits for the server to answer or close (its limits are seconds at most)."""
HALF_PROBE = b"GET /healthz HTTP/1.1\r\nHost: opsagent\r\n"
"""A health probe's head without its last line: completed by `END_OF_HEAD`, it is answered 200."""
END_OF_HEAD = b"\r\n"
HALF_POST = b"POST /slack/events HTTP/1.1\r\nHost: opsagent\r\nContent-Type: application/json\r\n"
"""A post's head without its last lines (add headers, then `END_OF_HEAD`)."""


@contextlib.asynccontextmanager
async def raw_socket(
    url: str, source: str = "127.0.0.1"
) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """A TCP connection to the server at `url` from the address `source`, closed on leaving."""
    address = urlsplit(url)
    reader, writer = await asyncio.open_connection(address.hostname, address.port, local_addr=(source, 0))
    try:
        yield reader, writer
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def answer(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    return await asyncio.wait_for(reader.read(), PATIENCE_S)


async def first_answer(reader: asyncio.StreamReader) -> bytes:
    """The status line and headers of the server's next answer (the connection may stay open)."""
    return await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), PATIENCE_S)
