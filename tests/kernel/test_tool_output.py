"""A tool's headline and source links: they reach the step and the trace, redacted, and never the model."""

from __future__ import annotations

from kernel import (
    Agent,
    RunResult,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    SourceLink,
    ToolOutput,
    ToolRegistry,
    text_turn,
    tool_from_function,
)
from worlds.dispatch import dispatch_call

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


async def test_a_dry_run_keeps_the_previews_headline_and_the_model_reads_its_text_behind_the_prefix():
    async def restart(service: str) -> str:
        """Restart a service."""
        raise AssertionError("a dry run never runs the tool")

    async def preview(service: str) -> ToolOutput:
        return ToolOutput(f'{{"would": "restart {service}"}}', headline=f"dry run: restart {service} password={SECRET}")

    async def plain_preview(service: str) -> dict[str, str]:
        return {"would": f"restart {service}"}

    dry = SideEffectPolicy(mode=SideEffectMode.DRY_RUN)
    with_headline = tool_from_function(restart, side_effect=True, preview=preview)
    result = await dispatch_call([with_headline], "restart", policy=dry, service="checkout")
    assert result.text == '[DryRun] Not executed (policy: dry_run). Would do: {"would": "restart checkout"}'
    assert result.headline == "dry run: restart checkout password=[REDACTED:password]"
    plain = tool_from_function(restart, side_effect=True, preview=plain_preview)
    unchanged = await dispatch_call([plain], "restart", policy=dry, service="checkout")
    assert unchanged.text == '[DryRun] Not executed (policy: dry_run). Would do: {"would": "restart checkout"}'
    assert unchanged.headline == ""


def digesting() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register
    async def search_logs(service: str) -> ToolOutput:
        """Search a service's error logs."""
        return ToolOutput(
            text=f"{service}: 40 × timeout calling tax-api\n  03:38:56Z ERROR timeout #40",
            more="\n".join([*(f"  03:38:{n:02d}Z ERROR timeout #{n}" for n in range(40)), f"  token={SECRET}"]),
        )

    return tools


async def test_what_a_digest_leaves_out_is_kept_redacted_behind_its_handle_and_the_marker_says_how_to_read_it():
    model = ScriptedModel(
        [
            text_turn("search_logs", "Known: nothing.", service="checkout"),
            text_turn("read_output", "Known: a digest. Missing: timeout #7.", handle="o1", match="timeout #7"),
            text_turn("finish", answer="done"),
        ]
    )
    result = await Agent(llm=model, tools=digesting()).run("checkout errors")
    digest = result.steps[0].observation
    assert digest.startswith(
        "checkout: 40 × timeout calling tax-api\n  03:38:56Z ERROR timeout #40\n…[the tool left out"
    )
    assert 'read_output(handle="o1", offset=69) shows them' in digest
    assert "timeout #7" not in digest, "the model reads the digest only"
    assert "1 of 43 lines contain 'timeout #7'" in result.steps[1].observation
    assert "03:38:07Z ERROR timeout #7" in result.steps[1].observation
    kept = result.outputs["o1"]
    assert kept[69:].startswith("  03:38:00Z ERROR timeout #0"), "the marker's offset is where the left-out part starts"
    assert SECRET not in kept, "the left-out part is redacted like the text"
    assert "read_output" in [tool.name for tool in model.requests[1].tools], "offered once a digest names a handle"
