"""Tool definitions: what the model is shown, what is refused at registration, and context injection."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import Field

from kernel import Agent, CallContext, ScriptedModel, ToolRegistry, text_turn


def test_spec_is_written_from_signature_and_docstring():
    registry = ToolRegistry()

    @registry.register(returns="a summary line")
    async def query_metrics(service: Annotated[str, Field(description="Service name.")], window: str = "30m") -> str:
        """Query a metric."""
        return ""

    spec = query_metrics.spec
    assert spec.description == "Query a metric. Returns: a summary line"
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "service": {"type": "string", "description": "Service name."},
            "window": {"type": "string", "default": "30m"},
        },
        "required": ["service"],
        "additionalProperties": False,
    }
    assert registry.render().endswith(
        '- query_metrics(service: string, window?: string = "30m"): Query a metric. Returns: a summary line'
    )


def test_registration_refuses_what_would_confuse_the_model():
    registry = ToolRegistry()

    async def finish(answer: str) -> str:
        """Reserved."""
        return answer

    async def undocumented(x: str) -> str:
        return x

    with pytest.raises(ValueError, match="'finish' is reserved"):
        registry.register(finish)
    with pytest.raises(ValueError, match="needs a docstring"):
        registry.register(undocumented)

    async def twice(x: str) -> str:
        """Once."""
        return x

    registry.register(twice)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(twice)


async def test_call_context_is_injected_and_hidden_from_the_model():
    registry = ToolRegistry()
    seen: list[CallContext] = []

    @registry.register
    async def restart(service: str, ctx: CallContext) -> str:
        """Restart a service."""
        seen.append(ctx)
        return "ok"

    assert "ctx" not in restart.spec.parameters["properties"]
    model = ScriptedModel([text_turn("restart", "Why: stuck.", service="a"), text_turn("finish", answer="done")])
    result = await Agent(llm=model, tools=registry).run("t")
    assert result.ok
    assert seen[0].run_id == result.run_id
    assert seen[0].step == 1
    assert seen[0].thought == "Why: stuck."
    assert seen[0].args_hash == result.steps[0].call.args_hash()


async def test_sync_functions_run_in_a_thread():
    registry = ToolRegistry()

    @registry.register
    def blocking(n: int) -> int:
        """Blocking work."""
        return n * 2

    model = ScriptedModel([text_turn("blocking", n=21), text_turn("finish", answer="42")])
    result = await Agent(llm=model, tools=registry).run("t")
    assert result.steps[0].observation == "42"
