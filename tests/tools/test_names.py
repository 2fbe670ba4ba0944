"""The one function every tool uses when a name names nothing: the nearest known names, then the known ones."""

from __future__ import annotations

import pytest

from opsagent_tools.names import capped, nearest_names, unknown_name

SERVICES = ["gateway", "order-service", "orders", "payment-service"]


@pytest.mark.parametrize(
    ("name", "nearest"),
    [
        ("order", ["order-service", "orders"]),  # contained in a known name
        ("order-service-v2", ["order-service", "orders", "payment-service"]),  # contains a known name first
        ("ordr", ["orders", "order-service"]),  # every letter, in order
        ("paymnt-service", ["payment-service", "order-service"]),  # a close spelling
        ("Order-Service", ["order-service", "orders", "payment-service"]),  # another case is near, not the same
        ("order-service", ["orders", "payment-service"]),  # the name itself is left out; a shared start ranks first
        ("kafka", []),
        ("", []),
    ],
)
def test_the_nearest_names_come_first(name, nearest):
    assert nearest_names(name, SERVICES) == nearest


def test_the_sentence_names_the_nearest_then_every_known_name_capped():
    assert unknown_name("service", "ordr", SERVICES, where="has logs in this window") == (
        'No service "ordr" has logs in this window. Nearest: orders, order-service. Known services (4): gateway, '
        "order-service, orders, payment-service."
    )
    many = [f"svc-{n:02d}" for n in range(40)]
    assert unknown_name("index", "x", many, where="exists", plural="indices", cap=3) == (
        'No index "x" exists. Known indices (40): svc-00, svc-01, svc-02 (+37 more).'
    )
    assert capped([]) == "none"


def test_a_name_with_quotes_is_shown_escaped():
    assert unknown_name("label", 'a"} or {b="', ["code"], where="exists").startswith(
        'No label "a\\"} or {b=\\"" exists.'
    )
