"""The admission's rules on their own, with a clock the test moves: what a request proves by its head, what address
a peer counts under, the caps a process's open-file limit allows, and who gives way (the sockets' view of the same
rules: test_connection_shares.py)."""

from __future__ import annotations

import pytest

from bot.http_limits.admission import Admission, RequestKind, classify, client_of
from bot.http_limits.limits import ConnectionCaps, HttpLimits

SIGNED_HEADERS = {"X-Slack-Signature": "v0=00", "X-Slack-Request-Timestamp": "1700000000"}


class Connection:
    """A connection as the admission sees it: it records that it was asked to give way."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.gave_way = False

    def give_way(self) -> None:
        self.gave_way = True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("method", "path", "headers", "kind"),
    [
        ("GET", "/healthz", {}, RequestKind.PROBE),
        ("HEAD", "/metrics", {}, RequestKind.PROBE),
        ("POST", "/healthz", {}, RequestKind.OPEN),
        ("POST", "/slack/events", SIGNED_HEADERS, RequestKind.SIGNED),
        ("POST", "/slack/events", {"X-Slack-Signature": "v0=00"}, RequestKind.OPEN),
        ("POST", "/alertmanager", SIGNED_HEADERS, RequestKind.OPEN),
        ("GET", "/runs/r1", {}, RequestKind.OPEN),
    ],
)
def test_a_request_proves_what_its_head_shows(method, path, headers, kind) -> None:
    assert classify(method, path, headers, "/slack/events") is kind


def test_without_slack_events_served_no_request_is_signed() -> None:
    assert classify("POST", "/slack/events", SIGNED_HEADERS, None) is RequestKind.OPEN


@pytest.mark.parametrize(
    ("peername", "client"),
    [
        (("203.0.113.7", 50000), "203.0.113.7"),
        (("2001:db8:1:2:aaaa::1", 50000, 0, 0), "2001:db8:1:2::/64"),
        (("2001:db8:1:2:bbbb::9", 50000, 0, 0), "2001:db8:1:2::/64"),
        (("::ffff:203.0.113.7", 50000, 0, 0), "203.0.113.7"),
        ("/run/opsagent.sock", "unknown"),
    ],
)
def test_a_peer_counts_under_its_address_and_an_ipv6_peer_under_its_64(peername, client) -> None:
    assert client_of(peername) == client


@pytest.mark.parametrize(
    ("open_files", "caps"),
    [
        (256, ConnectionCaps(total=96, unproven=48, per_address=16, backlog=16)),
        (1024, ConnectionCaps(total=384, unproven=192, per_address=16, backlog=64)),
        (1_048_576, ConnectionCaps(total=1024, unproven=512, per_address=16, backlog=128)),
        (-1, ConnectionCaps(total=1024, unproven=512, per_address=16, backlog=128)),
        (64, ConnectionCaps(total=16, unproven=8, per_address=8, backlog=8)),
    ],
)
def test_connections_and_those_accepted_in_one_turn_never_take_more_than_half_the_open_files(open_files, caps) -> None:
    assert ConnectionCaps.within(HttpLimits(), open_files) == caps


def test_a_burst_from_one_address_is_let_in_then_cut_back_to_its_share_once_it_has_waited() -> None:
    clock = Clock()
    admission = Admission(ConnectionCaps(total=100, unproven=50, per_address=2, backlog=8), burst_s=1.0, clock=clock)
    burst = [Connection(f"c{n}") for n in range(5)]
    assert all(admission.admit(c, "10.0.0.1") for c in burst)
    assert not any(c.gave_way for c in burst), "all within burst_s of connecting"
    clock.now = 1.0
    admission.burst_over(burst[0])  # its timer: the address is back to its share, the longest-waiting gone
    assert [c.name for c in burst if not c.gave_way] == ["c3", "c4"]
    late = Connection("late")
    assert admission.admit(late, "10.0.0.1")
    assert [c.name for c in burst if not c.gave_way] == ["c4"]


def test_a_kept_alive_connection_waits_again_and_an_older_waiting_one_gives_way_past_the_share() -> None:
    admission = Admission(ConnectionCaps(total=10, unproven=2, per_address=2, backlog=8), burst_s=0.0, clock=Clock())
    waiting = Connection("waiting")
    serving = Connection("serving")
    assert admission.admit(serving, "10.0.0.1")
    assert admission.start(serving, RequestKind.PROBE)
    assert admission.admit(waiting, "10.0.0.2")
    assert admission.admit(Connection("newer"), "10.0.0.3")
    admission.finish(serving)  # waiting again: three wait, the share is two
    assert waiting.gave_way
    assert not serving.gave_way
    assert len(admission) == 2


def test_a_connection_that_gave_way_starts_no_request_and_is_forgotten_once() -> None:
    admission = Admission(ConnectionCaps(total=10, unproven=1, per_address=1, backlog=8), burst_s=0.0, clock=Clock())
    first, second = Connection("first"), Connection("second")
    assert admission.admit(first, "10.0.0.1")
    assert admission.admit(second, "10.0.0.2")
    assert first.gave_way
    assert not admission.start(first, RequestKind.PROBE)
    admission.forget(first)  # its close, after it gave way
    assert len(admission) == 1
    assert admission.start(second, RequestKind.OPEN)


def test_at_the_total_a_connection_gives_way_only_once_it_has_waited_else_the_new_one_is_refused() -> None:
    clock = Clock()
    admission = Admission(ConnectionCaps(total=2, unproven=2, per_address=2, backlog=8), burst_s=1.0, clock=clock)
    first, second = Connection("first"), Connection("second")
    assert admission.admit(first, "10.0.0.1")
    assert admission.admit(second, "10.0.0.2")
    assert not admission.admit(Connection("third"), "10.0.0.3"), "nobody has waited a second yet"
    clock.now = 1.0
    assert admission.admit(Connection("fourth"), "10.0.0.4")
    assert (first.gave_way, second.gave_way) == (True, False)


def test_at_the_total_a_burst_of_one_address_gives_way_to_an_address_within_its_share() -> None:
    admission = Admission(ConnectionCaps(total=4, unproven=2, per_address=2, backlog=8), burst_s=1.0, clock=Clock())
    burst = [Connection(f"b{n}") for n in range(4)]
    assert all(admission.admit(c, "10.0.0.1") for c in burst)
    assert not admission.admit(Connection("more"), "10.0.0.1"), "past its share: its own burst is refused"
    probe = Connection("probe")
    assert admission.admit(probe, "10.0.0.2")
    assert [c.name for c in burst if c.gave_way] == ["b0"]
