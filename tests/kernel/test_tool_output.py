"""A tool's headline and source links: they reach the step and the trace, redacted, and never the model."""

from __future__ import annotations

from kernel import Agent, RunResult, ScriptedModel, SourceLink, ToolOutput, ToolRegistry, text_turn

SECRET = "hunter2hunter2"


def registry() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register
    async def query_metrics(service: str) -> ToolOutput:
        """Query a service's 5xx rate."""
        return ToolOutput(
            text=f"{service} 5xx: 0.2% → 31% at t-11m",
            headline=f"for-people 5xx   0.2% → 31%\nat t-11m password={SECRET}",
            links=(SourceLink("graph", f"https://prom.example/graph?g0.expr=x&password={SECRET}"),),
        )

    return tools


async def test_the_step_carries_the_headline_and_links_redacted_and_the_model_reads_only_the_text():
    model = ScriptedModel(
        [text_turn("query_metrics", "Known: nothing.", service="checkout"), text_turn("finish", answer="done")]
    )
    result = await Agent(llm=model, tools=registry()).run("checkout 5xx")
    step = result.steps[0]
    assert step.observation == "checkout 5xx: 0.2% → 31% at t-11m"
    assert step.headline == "for-people 5xx 0.2% → 31% at t-11m password=[REDACTED:password]", "one line, redacted"
    assert [link.label for link in step.links] == ["graph"]
    assert SECRET not in step.links[0].url
    seen = "\n".join(message.content for message in model.requests[1].messages)
    assert "for-people" not in seen, "the headline is for people only"
    assert "prom.example" not in seen


async def test_headline_and_links_survive_the_trace_round_trip():
    model = ScriptedModel(
        [text_turn("query_metrics", "Known: nothing.", service="checkout"), text_turn("finish", answer="done")]
    )
    result = await Agent(llm=model, tools=registry()).run("checkout 5xx")
    loaded = RunResult.from_json(result.to_json())
    assert loaded.steps[0].headline == result.steps[0].headline
    assert loaded.steps[0].links == result.steps[0].links
    assert loaded.steps[0].links[0].url.startswith("https://prom.example/graph?")
