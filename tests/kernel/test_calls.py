"""A call's canonical arguments: one spelling per set of arguments, the same bytes as the reference JSON.

Approvals and the audit log store the hash of `ToolCall.key`, so the spelling may never change: the fast path
for flat arguments must write exactly what `json.dumps` with the canonical options writes, for any arguments.
"""

from __future__ import annotations

import json
from enum import IntEnum, StrEnum
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kernel import ToolCall
from kernel.calls import canonical_args


def reference(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)
)


@given(st.dictionaries(st.text(), VALUES, max_size=6))
def test_canonical_arguments_are_the_reference_json(args):
    assert canonical_args(args) == reference(args)


class Level(StrEnum):
    HIGH = "high"


class Count(IntEnum):
    TWO = 2


def test_values_json_writes_its_own_way_are_written_its_way():
    args = {"nan": float("nan"), "inf": float("-inf"), "big": 10**40, "level": Level.HIGH, "count": Count.TWO}
    args |= {"quote": 'a"b\\c\n\u2028', "tuple": (1, "x"), "neg_zero": -0.0, "tiny": 5e-324}
    assert canonical_args(args) == reference(args)


def test_equal_calls_have_equal_keys_whatever_the_order_of_their_arguments():
    first = ToolCall(name="query_metrics", args={"service": "a", "window": "1h"})
    second = ToolCall(name="query_metrics", args={"window": "1h", "service": "a"})
    assert first.key == second.key == 'query_metrics:{"service":"a","window":"1h"}'
    assert first.args_hash() == second.args_hash()
