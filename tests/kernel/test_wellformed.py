"""One odd character or a deep argument never costs the run: lone UTF-16 surrogates (from a tool's output, a
model's tool arguments in either protocol, or its text) become U+FFFD, arguments nested past the limit are a
`bad_args` step the model can act on, and the trace (the checkpoint) always serialises and loads back."""

from __future__ import annotations

import json

import pytest

from kernel import (
    ErrorKind,
    LLMResponse,
    RunResult,
    ScriptedModel,
    StopReason,
    ToolRegistry,
    native_turn,
    react,
    text_turn,
)
from kernel.wellformed import MAX_ARG_DEPTH, wellformed

HALF_EMOJI = "\ud83d"
"""What a logger writes when it cuts 😀 (U+D83D U+DE00) in half."""
FINISH = text_turn("finish", answer="done (step 1)")


def round_trips(result: RunResult) -> RunResult:
    """The trace as a checkpoint: written as JSON and read back, equal to itself."""
    loaded = RunResult.from_json(result.to_json())
    assert loaded == result
    return loaded


@pytest.fixture
def logs() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    async def search_logs(service: str, query: str = "") -> str:
        """Search a service's logs: one JSON log line whose message was cut inside an emoji, read as backends do."""
        record = json.loads('{"level": "error", "msg": "payment failed \\ud83d"}')
        return f"{service} {record['level'].upper()} {record['msg']}"

    @registry.register
    async def echo(text: str) -> str:
        """Say `text` back, so the test sees what the tool received."""
        return f"got {text!r}"

    return registry


async def run(tools: ToolRegistry, *turns: object) -> RunResult:
    model = ScriptedModel([*turns, FINISH])
    result = await react("order-service 5xx", tools, llm=model)
    model.assert_complete()
    return round_trips(result)


def test_only_lone_surrogates_change() -> None:
    assert wellformed(f"a{HALF_EMOJI}b") == "a\ufffdb"
    assert wellformed("\udc00 and \ud83d") == "\ufffd and \ufffd"
    assert wellformed("\ud83d\ude00") == "😀", "a pair written as two halves is the character it encodes"
    for text in ("plain", "héllo wörld", "日本語 😀"):
        assert wellformed(text) is text


async def test_a_log_line_with_a_lone_surrogate_is_an_observation_not_a_crash(logs: ToolRegistry) -> None:
    result = await run(logs, text_turn("search_logs", service="payment-service"))
    assert result.stop_reason is StopReason.FINISH
    assert result.steps[0].error is None
    assert "payment failed \ufffd" in result.steps[0].observation


@pytest.mark.parametrize("protocol", ["native", "text"])
async def test_a_lone_surrogate_in_tool_arguments_is_replaced_before_hashing(logs: ToolRegistry, protocol) -> None:
    escaped = '{"text": "cut \\ud83d here"}'  # JSON as the model wrote it: the escape decodes to a lone surrogate
    turn = (
        native_turn(("echo", escaped))
        if protocol == "native"
        else f'Checking.\n```json\n{{"action": "echo", "args": {escaped}}}\n```'
    )
    result = await run(logs, turn)
    call = result.steps[0].call
    assert call is not None
    assert call.args == {"text": "cut \ufffd here"}
    assert len(call.args_hash()) == 64
    assert result.steps[0].observation == "got 'cut \ufffd here'"


@pytest.mark.parametrize("protocol", ["native", "text"])
async def test_arguments_nested_900_deep_are_a_bad_args_step(logs: ToolRegistry, protocol) -> None:
    deep = '{"text": ' + "[" * 900 + "]" * 900 + "}"
    turn = (
        native_turn(("echo", deep)) if protocol == "native" else f'```json\n{{"action": "echo", "args": {deep}}}\n```'
    )
    result = await run(logs, turn)
    assert result.stop_reason is StopReason.FINISH, "the model was told, and went on"
    step = result.steps[0]
    assert step.error is ErrorKind.BAD_ARGS
    assert f"nest deeper than {MAX_ARG_DEPTH} levels" in step.observation
    assert "Refused arguments for 'echo'" in step.observation


async def test_a_lone_surrogate_in_the_models_own_text_is_kept_replaced(logs: ToolRegistry) -> None:
    thought = LLMResponse(text=f"Known: a cut emoji {HALF_EMOJI}.\n" + text_turn("echo", text="x"))
    result = await run(logs, thought)
    assert result.turns[0].text.startswith("Known: a cut emoji \ufffd.")
    assert result.steps[0].thought == "Known: a cut emoji \ufffd."
