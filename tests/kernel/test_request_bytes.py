"""The requests the model is sent, byte for byte, against a recording of a mixed run (truncation, elision, errors,
a resumed native run): a change to how the conversation is kept or fenced must not change what the model reads
(`tests/fixtures/requests/`, recorded with the kernel of 138df07; re-recorded when read_output came to be offered
only from the turn after an observation was cut: the first two requests lost its spec, nothing else changed; and
when the loop guard's words for people came to lead its observation: that sentence alone changed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kernel import Agent, Budget, ContextPolicy, RunResult, ScriptedModel, ToolRegistry, native_turn, text_turn

RECORDED = Path(__file__).parents[1] / "fixtures" / "requests" / "mixed_run.json"
POLICY = ContextPolicy(obs_limit_tokens=1000, high_water_tokens=2500, low_water_tokens=1200, keep_recent=1)
TEXT_TURNS = [
    text_turn("query_metrics", "Why: the rate first.", service="checkout"),
    text_turn("search_logs", "Why: the errors.", service="checkout", query="huge"),
    text_turn("search_logs", service="checkout", query="bad"),
    text_turn("search_logs", service="checkout", query="dict"),
    "I think the cause is the payment pool.",
    text_turn("no_such_tool", x=1),
    text_turn("query_metrics", "Again.", service="checkout"),
]
NATIVE_TURNS = [
    native_turn(
        ("search_logs", {"service": "payments", "query": "huge"}),
        ("query_metrics", {"service": "payments"}),
        ("search_logs", {"service": "payments", "query": "secret"}),
        start_id=1,
    ),
    native_turn(("rollback_deployment", {"service": "payments", "to_version": "v1"}), start_id=4),
    native_turn(
        ("search_logs", {"service": "payments", "query": "huge"}), ("read_output", {"handle": "o2"}), start_id=5
    ),
    native_turn(("finish", {"answer": "the payment pool"}), start_id=7),
]


def _seen(model: ScriptedModel, nonce: str) -> list[dict[str, Any]]:
    """Every request as the model got it, the run's random nonce written as NONCE."""
    return [
        {
            "instructions": r.instructions,
            "tools": [t.model_dump() for t in r.tools],
            "messages": [
                {
                    "role": m.role,
                    "content": m.content.replace(nonce, "NONCE"),
                    "tool_calls": [c.render() for c in m.tool_calls],
                    "tool_call_id": m.tool_call_id,
                    "tool_name": m.tool_name,
                }
                for m in r.messages
            ],
        }
        for r in model.requests
    ]


async def requests_of_a_mixed_run(tools: ToolRegistry) -> dict[str, Any]:
    """A text-protocol run stopped by its budget, resumed from its trace in native calls: truncation, elision,
    tool errors, an unknown tool, the loop guard, a prose reminder, parallel reads, a refused side effect."""
    first = ScriptedModel(TEXT_TURNS)
    agent = Agent(llm=first, tools=tools, context=POLICY, budget=Budget(max_steps=len(TEXT_TURNS) - 1), salvage=False)
    stopped = await agent.run("why is checkout failing?", data="alert: checkout 5xx > 5%")
    first.assert_complete()
    second = ScriptedModel(NATIVE_TURNS)
    resumed = await Agent(llm=second, tools=tools, context=POLICY, budget=Budget(max_steps=30)).resume(
        RunResult.from_json(stopped.to_json())
    )
    second.assert_complete()
    assert resumed.ok
    return {"text": _seen(first, stopped.nonce), "resumed": _seen(second, stopped.nonce)}


async def test_the_model_is_sent_the_same_bytes_as_before(tools):
    recorded = json.loads(RECORDED.read_text())
    seen = await requests_of_a_mixed_run(tools)
    for part in ("text", "resumed"):
        assert len(seen[part]) == len(recorded[part])
        for turn, (got, expected) in enumerate(zip(seen[part], recorded[part], strict=True)):
            assert got == expected, f"{part} request {turn} differs from the recording"
    shown = "".join(m["content"] for r in seen["resumed"] for m in r["messages"])
    for covered in ("elided from view", "…[truncated", "<data-NONCE>", "[LoopGuard]", "[REDACTED:"):
        assert covered in shown, f"the run covers {covered!r}"
    offered = [[tool["name"] for tool in request["tools"]] for request in seen["text"]]
    assert ["read_output" in names for names in offered] == [False, False, *[True] * (len(offered) - 2)], (
        "read_output is offered from the turn after the first truncated observation (step 2)"
    )
