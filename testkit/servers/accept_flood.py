"""A process that logs as `opsagent serve` does and runs a plain asyncio server under a small open-file limit, so
that connections past it make asyncio log `socket.accept() out of system resource`, up to 100 times a loop turn.

`python -m servers.accept_flood OPEN_FILES` prints its port, holds every connection it accepts, and exits when its
stdin closes; its log is on stderr.
"""

from __future__ import annotations

import asyncio
import resource
import sys

from bot.telemetry.log_setup import configure_logging


async def _serve(open_files: int) -> None:
    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    stdin = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    await stdin.read()
    server.close()


if __name__ == "__main__":
    configure_logging(json=True)
    asyncio.run(_serve(int(sys.argv[1])))
