"""Property tests: whatever the model says and whatever the tools do, a run ends in a RunResult."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel import Agent, Budget, LLMResponse, NativeToolCall, RunResult, StopReason, ToolRegistry, text_turn

TOOL_NAMES = ["fetch", "finish", "read_output", "nope", ""]
BEHAVIOURS = ["ok", "raise", "hang", "huge", "dict", "none", "bytes", "object", "base_exception_free"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
args = st.dictionaries(
    st.sampled_from(["behaviour", "handle", "answer", "x", "offset"]),
    st.sampled_from(BEHAVIOURS) | json_values,
    max_size=3,
)
text_outputs = st.one_of(
    st.text(max_size=300),
    st.builds(lambda name, a: text_turn(name, **a), st.sampled_from(TOOL_NAMES), args),
    st.builds(
        lambda name, a, cut: json.dumps({"action": name, "args": a})[:cut],
        st.sampled_from(TOOL_NAMES),
        args,
        st.integers(0, 80),
    ),
)
native_outputs = st.builds(
    lambda calls, text: LLMResponse(
        text=text, tool_calls=tuple(NativeToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls))
    ),
    st.lists(
        st.tuples(st.sampled_from(TOOL_NAMES), st.one_of(args.map(json.dumps), st.text(max_size=30))),
        min_size=1,
        max_size=3,
    ),
    st.text(max_size=50),
)
outputs = st.lists(st.one_of(text_outputs, native_outputs), min_size=1, max_size=12)


class CyclingModel:
    """Plays the drawn outputs in a loop: a model that may say anything, for as long as it is asked."""

    model = "property"

    def __init__(self, turns: list[str | LLMResponse]) -> None:
        self.turns = turns
        self.calls = 0

    async def complete(self, request) -> LLMResponse:
        turn = self.turns[self.calls % len(self.turns)]
        self.calls += 1
        return turn if isinstance(turn, LLMResponse) else LLMResponse(text=turn)


def misbehaving_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register(timeout=0.01)
    async def fetch(behaviour: Any = "ok") -> Any:
        """A tool that does whatever it is told to, badly."""
        match behaviour:
            case "raise":
                raise RuntimeError("backend exploded")
            case "hang":
                await asyncio.sleep(5)
            case "huge":
                return "x" * 200_000
            case "dict":
                return {"nested": {"list": [1, 2, {"deep": None}]}}
            case "none":
                return None
            case "bytes":
                return b"\xff\xfe binary"
            case "object":
                return object()
        return f"fine: {behaviour!r}"

    return registry


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(outputs)
def test_a_run_always_ends_in_an_explicit_result(turns):
    model = CyclingModel(turns)
    agent = Agent(llm=model, tools=misbehaving_tools(), budget=Budget(max_steps=8, max_seconds=5))
    result = asyncio.run(agent.run("investigate"))
    assert isinstance(result, RunResult)
    assert result.ok == (result.stop_reason is StopReason.FINISH)
    if result.ok:
        assert result.answer
    else:
        assert result.answer is None
    assert result.usage.steps <= 8
    assert all(s.observation or (s.call and s.call.name == "finish") for s in result.steps)
    assert RunResult.from_json(result.to_json()) == result
