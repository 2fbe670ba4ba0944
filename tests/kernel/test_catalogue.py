"""The catalogue a run offers: the registered tools it offers in full, then `read_output` and `finish`.

It is built once per version of a tool set, so what each request carries must still follow the registry.
"""

from __future__ import annotations

from kernel import Agent, ScriptedModel, ToolRegistry, text_turn


def offered(model: ScriptedModel) -> list[list[str]]:
    return [[spec.name for spec in request.tools] for request in model.requests]


async def test_runs_on_one_tool_set_offer_it_and_a_tool_registered_later_joins_the_next_run():
    registry = ToolRegistry()

    @registry.register
    async def query_metrics(service: str) -> str:
        """A service's metrics."""
        return "ok"

    first, second = ScriptedModel([text_turn("finish", answer="a")]), ScriptedModel([text_turn("finish", answer="b")])
    await Agent(llm=first, tools=registry).run("t")
    await Agent(llm=second, tools=registry).run("t")
    assert offered(first) == offered(second) == [["query_metrics", "finish"]]

    @registry.register
    async def search_logs(service: str) -> str:
        """A service's logs."""
        return "ok"

    third = ScriptedModel([text_turn("finish", answer="c")])
    await Agent(llm=third, tools=registry).run("t")
    assert offered(third) == [["query_metrics", "search_logs", "finish"]]
