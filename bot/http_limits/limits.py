"""The HTTP server's limits as configured (`HttpLimits`), and the connection caps derived from them and the
process's open-file limit (`ConnectionCaps`)."""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024
FILES_PER_CONNECTION = 2
"""Connections get at most half of the process's open-file limit: the other half is for everything else the bot
opens (the run store, its clients of Slack, the model and the tools, MCP servers' pipes, log files)."""
ACCEPT_BATCH_SHARE = 16
MAX_ACCEPT_BATCH = 128
"""asyncio accepts up to its listen backlog of connections in one loop turn, before any is admitted, and those
that give way free their file only a turn later: the backlog is kept to 1/16 of the open files (8 to 128), and two
batches of it come off the connections' half."""
UNPROVEN_SHARE = 2
"""Connections that have proven nothing get at most 1/2 of the total; the rest is kept for probes and Slack."""


@dataclass(frozen=True)
class HttpLimits:
    """The server's limits; the defaults suit Slack (small signed posts answered at once) and Alertmanager."""

    header_timeout_s: float = 5.0
    """From connecting to the end of the first request's head; later requests get `idle_timeout_s` to begin."""
    body_timeout_s: float = 30.0
    """From the end of a request's head to its answer, for a request with a body (reading it is the slow part)."""
    idle_timeout_s: float = 15.0
    """How long a kept-alive connection may wait, idle or half-way through a later head, before it is closed
    (aiohttp's `keepalive_timeout`)."""
    drain_s: float = 2.0
    """How long the rest of a body no handler read (a refused request's) is drained and dropped after the answer,
    so the client can read the answer, before the connection is closed (aiohttp's `lingering_time`, 10 s)."""
    max_connections: int = 1024
    """Open connections at once, at most: fewer when the open-file limit is low (see `ConnectionCaps`)."""
    per_address: int = 16
    """Connections one client address may hold waiting for a request head, and Slack-signed requests it may have
    in progress (its further ones count as unsigned: the header names can be forged, the signature is checked
    later)."""
    burst_s: float = 1.0
    """How long a new connection may wait for its request head before it counts against its address's share: a
    burst of connections from one address (a proxy, a client sending requests in parallel) is let in, as the server
    reads their heads a moment after it accepts them."""
    body_bytes: int = MIB
    """A request body's size limit (413 past it) on every path but those given their own (`/alertmanager`)."""


@dataclass(frozen=True)
class ConnectionCaps:
    """How many connections the server holds at once: `total`; at most `unproven` of them waiting for a request
    head or with an unsigned request in progress; at most `per_address` of one address waiting for a head, or with
    a signed request in progress (see `bot.http_limits.admission`)."""

    total: int
    unproven: int
    per_address: int
    backlog: int
    """Connections accepted in one loop turn (and the kernel's queue of connections not yet accepted)."""

    @classmethod
    def within(cls, limits: HttpLimits, open_files: int) -> ConnectionCaps:
        """The caps of `limits` on a process that may open `open_files` files (its soft RLIMIT_NOFILE, -1 when
        unlimited): connections, with those being accepted and closed at a loop turn, never take more than half of
        them, so accepting one never fails for want of a file descriptor (nor does anything else the bot opens)."""
        if open_files < 0:
            backlog, within_files = MAX_ACCEPT_BATCH, limits.max_connections
        else:
            backlog = max(8, min(MAX_ACCEPT_BATCH, open_files // ACCEPT_BATCH_SHARE))
            within_files = open_files // FILES_PER_CONNECTION - 2 * backlog
        total = max(2, min(limits.max_connections, within_files))
        unproven = total // UNPROVEN_SHARE
        return cls(total, unproven, max(1, min(limits.per_address, unproven)), backlog)
