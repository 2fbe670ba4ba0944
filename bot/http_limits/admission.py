"""Who may hold a connection to the bot's HTTP server: a share per client address for connections that have proven
nothing, the rest kept for requests that have (health probes, Slack's signed posts).

A slow client (slowloris) opens connections and sends their request heads or bodies a byte at a time, holding each
as long as the server waits; with one global cap it locks everyone else out. Here:

- A connection *waits* until its request head is complete (and again between kept-alive requests). Past
  `per_address` waiting connections of one address, its connection that has waited longest gives way to the new
  one; past `unproven` connections waiting or with an open request in progress, or at `total`, the longest-waiting
  of any address does. A legitimate client sends its head at once: the one that waited longest is the slow one.
  Only a connection that has waited `burst_s` gives way: a burst of connections is let in (the server reads their
  heads a moment after it accepts them), and `burst_s` later the caps hold again. At `total`, when no connection
  has waited that long, a connection of an address past its share gives way to one of an address within its own,
  else the new one is refused: a burst of one address never keeps another out.
- Once its head is complete, a request is a *probe* (`GET /healthz`, `/metrics`), *signed* (Slack's signature
  headers on the events path; the endpoint checks the signature itself, on the body) or *open* (anything else).
  Open requests in progress count in the unproven share: past it, 503 at once. An address's signed requests in
  progress past `per_address` count as open ones: a client that forges the header names holds no more of the rest.
- Probes and signed requests may use the rest of `total`: the reserve that connections proving nothing hold for a
  moment at most (one admitted there gives way to the next new one once it has waited `burst_s`, and its request
  must be a probe or signed).

An address is the TCP peer's; an IPv6 peer's is its /64 (one host usually holds the whole prefix). `X-Forwarded-For`
is not read: a connection is admitted before any header arrives, and the header is the client's own word. Behind a
reverse proxy all connections come from the proxy's address: the proxy must then guard against slow clients itself
(nginx buffers request heads and bodies, with its own timeouts), and clients sharing an address share its share.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, assert_never

from bot.http_limits.limits import ConnectionCaps

PROBE_PATHS = frozenset({"/healthz", "/metrics"})
SLACK_SIGNATURE_HEADERS = ("X-Slack-Signature", "X-Slack-Request-Timestamp")
UNKNOWN_CLIENT = "unknown"
"""The address of a peer without one (a Unix socket)."""


class RequestKind(Enum):
    """What a request has proven by its head alone."""

    PROBE = "probe"
    SIGNED = "signed"
    OPEN = "open"


def classify(method: str, path: str, headers: Mapping[str, str], signed_path: str | None) -> RequestKind:
    """A request's kind by its head: a probe is a GET of a health or metrics path; a signed request is a POST to
    `signed_path` (Slack's events, when served) with both of Slack's signature headers."""
    if method in ("GET", "HEAD") and path in PROBE_PATHS:
        return RequestKind.PROBE
    if method == "POST" and path == signed_path and all(name in headers for name in SLACK_SIGNATURE_HEADERS):
        return RequestKind.SIGNED
    return RequestKind.OPEN


def client_of(peername: object) -> str:
    """The address a connection counts under: the peer's IP; an IPv4 address mapped into IPv6 is the IPv4 address,
    any other IPv6 address its /64 network."""
    if not isinstance(peername, tuple) or not peername:
        return UNKNOWN_CLIENT
    try:
        address = ipaddress.ip_address(peername[0])
    except ValueError:
        return str(peername[0])
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class Holder(Protocol):
    """A connection the admission holds; it may be asked to give way to a newer one."""

    def give_way(self) -> None:
        """Close at once: the admission has already forgotten this connection."""


@dataclass
class _Held:
    client: str
    kind: RequestKind | None
    """The request in progress; None while the connection waits for a request head."""
    since: float
    """When it last began to wait."""


class Admission:
    """The server's connections and what each holds, within `caps` (the module's docstring says how)."""

    def __init__(self, caps: ConnectionCaps, *, burst_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.caps = caps
        self._burst_s = burst_s
        self._clock = clock
        self._held: dict[Holder, _Held] = {}
        self._waiting: OrderedDict[Holder, None] = OrderedDict()
        """Connections waiting for a request head, the longest-waiting first."""
        self._waiting_of: dict[str, OrderedDict[Holder, None]] = {}
        self._signed_of: dict[str, int] = {}
        self._open = 0
        """Open requests in progress."""

    def __len__(self) -> int:
        return len(self._held)

    def admit(self, holder: Holder, client: str) -> bool:
        """A new connection from `client`: held, waiting for its first request head, once the connections past
        its address's share, then past the unproven share, that have waited `burst_s` have given way (the
        longest-waiting first), and one more if the total is reached: one that has waited `burst_s`, else one of
        an address past its share if `client` is within its own. False: refused (the total is reached, nobody
        gave way)."""
        now = self._clock()
        self._trim(self._waiting_of.get(client), self.caps.per_address - 1, now)
        self._trim(self._waiting, self.caps.unproven - self._open - 1, now)
        if len(self._held) >= self.caps.total:
            self._trim(self._waiting, len(self._waiting) - 1, now)
        if len(self._held) >= self.caps.total and len(self._waiting_of.get(client, ())) < self.caps.per_address:
            self._displace()
        if len(self._held) >= self.caps.total:
            return False
        self._held[holder] = _Held(client, None, now)
        self._wait(holder, client)
        return True

    def burst_over(self, holder: Holder) -> None:
        """`burst_s` after the holder connected: its address's connections past its share that have waited
        `burst_s` give way, the longest-waiting first (a client opening many at once, then none, keeps no more
        than its share). Past the unproven share they give way to new connections only: until one comes, they
        take nothing from anyone."""
        held = self._held.get(holder)
        if held is not None:
            self._trim(self._waiting_of.get(held.client), self.caps.per_address, self._clock())

    def start(self, holder: Holder, kind: RequestKind) -> bool:
        """The holder's request head is complete and its request is `kind`: its request is in progress, unless it
        is open and the unproven share has no room (False: answer 503), or the connection has given way already."""
        held = self._held.get(holder)
        if held is None or held.kind is not None:
            return False
        if kind is RequestKind.SIGNED and self._signed_of.get(held.client, 0) >= self.caps.per_address:
            kind = RequestKind.OPEN
        match kind:
            case RequestKind.PROBE:
                pass
            case RequestKind.SIGNED:
                self._signed_of[held.client] = self._signed_of.get(held.client, 0) + 1
            case RequestKind.OPEN:
                if self._open >= self.caps.unproven:
                    return False
                self._open += 1
            case _:
                assert_never(kind)
        self._unwait(holder, held.client)
        held.kind = kind
        return True

    def finish(self, holder: Holder) -> None:
        """The holder's request is answered: it waits for its next request head (kept alive); past the unproven
        share, the other connections that have waited `burst_s` give way."""
        held = self._held.get(holder)
        if held is None or held.kind is None:
            return
        self._release(held)
        held.kind, held.since = None, self._clock()
        self._wait(holder, held.client)
        self._trim(self._waiting, self.caps.unproven - self._open, held.since, sparing=holder)

    def forget(self, holder: Holder) -> None:
        """The connection is closed, or closing: its place is free (again and again: nothing happens)."""
        held = self._held.pop(holder, None)
        if held is None:
            return
        if held.kind is None:
            self._unwait(holder, held.client)
        else:
            self._release(held)

    def _trim(
        self, waiting: OrderedDict[Holder, None] | None, keep: int, now: float, *, sparing: Holder | None = None
    ) -> None:
        """Past `keep` connections of `waiting`, the longest-waiting give way while they have waited `burst_s`
        (never `sparing`)."""
        while waiting and len(waiting) > keep:
            oldest = next(iter(waiting))
            if oldest is sparing or now - self._held[oldest].since < self._burst_s:
                return
            self._evict(oldest)

    def _displace(self) -> None:
        """The longest-waiting connection of an address past its share gives way, however briefly it has waited
        (a burst of one address gives way to the connections of addresses within their share)."""
        for holder in self._waiting:
            if len(self._waiting_of[self._held[holder].client]) > self.caps.per_address:
                self._evict(holder)
                return

    def _wait(self, holder: Holder, client: str) -> None:
        self._waiting[holder] = None
        self._waiting_of.setdefault(client, OrderedDict())[holder] = None

    def _unwait(self, holder: Holder, client: str) -> None:
        del self._waiting[holder]
        waiting = self._waiting_of[client]
        del waiting[holder]
        if not waiting:
            del self._waiting_of[client]

    def _release(self, held: _Held) -> None:
        match held.kind:
            case RequestKind.SIGNED:
                left = self._signed_of[held.client] - 1
                if left:
                    self._signed_of[held.client] = left
                else:
                    del self._signed_of[held.client]  # addresses come and go: none is kept at zero
            case RequestKind.OPEN:
                self._open -= 1
            case RequestKind.PROBE | None:
                pass
            case _:
                assert_never(held.kind)

    def _evict(self, holder: Holder) -> None:
        self.forget(holder)
        holder.give_way()
