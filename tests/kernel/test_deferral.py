"""Deferred tool schemas: a run offers a core chosen by its task in full and an index of the rest, which the model
loads with `load_tools` (offered from the next turn on); dispatch takes every registered tool all the same."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import pytest
from pydantic import Field

from kernel import (
    Agent,
    Budget,
    ContextPolicy,
    ErrorKind,
    RunResult,
    ScriptedModel,
    ToolRegistry,
    native_turn,
    prepare_conversation,
    text_turn,
    tool_from_function,
)
from kernel.catalogue import catalogue_of

LOAD = "load_tools"
PURPOSES = {
    "query_metrics": "Query a service's error rate, latency and traffic metrics from Prometheus over a window.",
    "search_logs": "Search a service's logs for errors and exceptions, grouped by message.",
    "k8s_pods": "List the Kubernetes pods of a deployment with their restarts and status (crashloop, OOMKilled).",
    "k8s_events": "List Kubernetes events of a namespace: evictions, failed scheduling, OOM kills.",
    "read_repo_file": "Read a file from a service's source repository at a tag or commit.",
    "compare_refs": "Compare two versions of a service's code: the changed files and their diff.",
    "search_runbooks": "Search the team's runbooks by words.",
    "similar_incidents": "Find past incidents like this one in the memory of earlier investigations.",
}


CORE3 = ContextPolicy(core_tools=3)
"""A core of three (the default is two), so a task about pods and events gets both, and metrics."""
TASK = "checkout pods crashloop with OOMKilled, and events of OOM kills; error rate up"
"""Matches query_metrics, k8s_pods and k8s_events best: search_logs is in the index."""


def registry(**options: bool) -> ToolRegistry:
    """Eight tools, each with a long enough schema that deferring the rest pays."""
    tools = ToolRegistry()
    for name, text in PURPOSES.items():
        tools.add(_tool(name, text, always=options.get(name, False)))
    return tools


def _tool(name: str, text: str, *, always: bool = False):
    async def handler(
        service: Annotated[str, Field(description="The service, as its metrics and logs name it, e.g. checkout.")],
        window: Annotated[str, Field(description="How far back to look: 15m, 1h, 6h or 24h.")] = "30m",
    ) -> str:
        return f"{name} of {service} over {window}: ok"

    handler.__doc__ = f"{text} Use it when the task is about {name.replace('_', ' ')}; it never changes anything."
    return dataclasses.replace(tool_from_function(handler, name=name), always=always)


def offered(model: ScriptedModel) -> list[list[str]]:
    return [[spec.name for spec in request.tools] for request in model.requests]


def index_of(model: ScriptedModel, turn: int = 0) -> str:
    [spec] = [spec for spec in model.requests[turn].tools if spec.name == LOAD]
    return spec.description


async def test_the_first_request_offers_the_core_the_task_matches_and_an_index_line_for_every_other_tool():
    model = ScriptedModel([text_turn("finish", answer="done")])
    result = await Agent(llm=model, tools=registry(), context=CORE3).run(TASK)
    [names] = offered(model)
    assert names[:3] == ["query_metrics", "k8s_pods", "k8s_events"]
    assert names[3:] == [LOAD, "finish"], "read_output comes once an observation is cut"
    index = index_of(model).splitlines()
    assert index[0] == "Load tools' schemas (by names or query) to call them from your next turn. Tools:"
    assert index[1:] == [
        "- search_logs: Search a service's logs for errors and exceptions…",
        "- read_repo_file: Read a file from a service's source repository at a tag…",
        "- compare_refs: Compare two versions of a service's code",
        "- search_runbooks: Search the team's runbooks by words",
        "- similar_incidents: Find past incidents like this one in the memory of…",
    ]
    assert result.offered == [("query_metrics", "k8s_pods", "k8s_events")]


async def test_loaded_schemas_are_offered_natively_from_the_next_turn_and_the_trace_says_so():
    model = ScriptedModel(
        [
            native_turn((LOAD, {"names": ["search_logs", "compare_refs"]}), start_id=1),
            native_turn(("search_logs", {"service": "checkout"}), start_id=2),
            native_turn(("finish", {"answer": "the logs say ok (step 2)"}), start_id=3),
        ]
    )
    result = await Agent(llm=model, tools=registry(), context=CORE3).run(TASK)
    assert result.ok
    assert result.steps[0].observation == "Loaded search_logs, compare_refs: offered in full from your next turn on."
    assert result.steps[0].headline == "loaded the schemas of search_logs, compare_refs", (
        "people's words, not the model's"
    )
    first, second, third = offered(model)
    assert "search_logs" not in first
    assert second == ["query_metrics", "search_logs", "k8s_pods", "k8s_events", "compare_refs", *first[-2:]]
    assert second == third, "loaded tools stay offered"
    assert index_of(model, 0) == index_of(model, 2), "the index is the same all run long (a stable prefix)"
    assert [set(names) for names in result.offered] == [set(first[:-2]), set(second[:-2]), set(third[:-2])]
    assert model.requests[1].tools is model.requests[2].tools, "runs and turns that offer the same share one offer"


async def test_in_the_text_protocol_a_loaded_tool_joins_the_catalogue_of_the_next_turn():
    model = ScriptedModel(
        [
            text_turn(LOAD, "Why: the logs.", query="logs exceptions"),
            text_turn("finish", answer="loaded"),
        ]
    )
    await Agent(llm=model, tools=registry()).run(TASK)
    before, after = (prepare_conversation(request, native_tools=False)[0] for request in model.requests)
    assert "- search_logs(service: string" not in before
    assert "\n- search_logs: Search a service's logs" in before, "the index, in load_tools' description"
    assert "\n- search_logs(service: string" in after


async def test_a_tool_only_in_the_index_is_dispatched_and_validated_like_any_other():
    model = ScriptedModel(
        [
            text_turn("similar_incidents", service="checkout"),
            text_turn("compare_refs", services="checkout"),
            text_turn("finish", answer="done"),
        ]
    )
    result = await Agent(llm=model, tools=registry()).run("checkout error rate")
    assert "similar_incidents" not in offered(model)[0]
    assert result.steps[0].ok
    assert result.steps[0].observation == "similar_incidents of checkout over 30m: ok"
    assert result.steps[1].error is ErrorKind.BAD_ARGS
    assert 'Expected arguments: compare_refs(service: string, window?: string = "30m")' in result.steps[1].observation


async def test_load_tools_says_what_it_could_not_load_and_fails_clearly_when_nothing_loads():
    model = ScriptedModel(
        [
            text_turn(LOAD, names=["no_such_tool"]),
            text_turn(LOAD, names=["search_logs", "nope"]),
            text_turn(LOAD, query="zzz qqq"),
            text_turn("finish", answer="done"),
        ]
    )
    result = await Agent(llm=model, tools=registry()).run(TASK)
    nothing, some, no_match = (step.observation for step in result.steps[:3])
    assert nothing.endswith(
        "'load_tools' failed: no tool has that name; not tools here: 'no_such_tool'. "
        "Give names from load_tools' list, or other words in query."
    )
    assert some == "Loaded search_logs: offered in full from your next turn on. Not tools here: 'nope'"
    assert result.steps[0].said == "'load_tools' failed: no tool has that name; not tools here: 'no_such_tool'."
    assert "no tool matches 'zzz qqq'" in no_match


async def test_pinned_tools_are_offered_whatever_the_task():
    model = ScriptedModel([text_turn("finish", answer="done")])
    await Agent(llm=model, tools=registry(similar_incidents=True), context=CORE3).run("checkout pods crashloop")
    [names] = offered(model)
    assert "similar_incidents" in names
    assert len([n for n in names if n in PURPOSES]) == 4, "the pinned one, and a core of three"


async def test_nothing_is_deferred_when_the_tools_fit_the_core_or_deferring_would_not_pay():
    few = ToolRegistry([_tool(name, PURPOSES[name]) for name in ("query_metrics", "search_logs", "k8s_pods")])
    model = ScriptedModel([text_turn("finish", answer="done")])
    await Agent(llm=model, tools=few, context=CORE3).run("t")
    assert offered(model) == [["query_metrics", "search_logs", "k8s_pods", "finish"]]
    tiny = ToolRegistry()
    for i in range(4):

        @tiny.register(name=f"t{i}")
        async def t() -> str:
            """x"""
            return "x"

    model = ScriptedModel([text_turn("finish", answer="done")])
    await Agent(llm=model, tools=tiny, context=CORE3).run("t")
    assert LOAD not in offered(model)[0], "a one-word tool costs less than an index of it"


async def test_a_resumed_run_offers_what_it_had_loaded():
    big = registry()

    async def rollback_deployment(service: str) -> str:
        """Roll a service back. Side effect."""
        return "rolled back"

    big.add(tool_from_function(rollback_deployment, side_effect=True))
    first = ScriptedModel([text_turn(LOAD, names=["search_logs"]), text_turn("search_logs", service="checkout")])
    stopped = await Agent(llm=first, tools=big, budget=Budget(max_steps=1), salvage=False).run("checkout 5xx rate")
    assert stopped.stop_reason == "max_steps"
    second = ScriptedModel([text_turn("finish", answer="done")])
    resumed = await Agent(llm=second, tools=big, budget=Budget(max_steps=5)).resume(
        RunResult.from_json(stopped.to_json())
    )
    assert resumed.ok
    assert "search_logs" in offered(second)[0]
    assert resumed.offered[: len(stopped.offered)] == stopped.offered
    assert "search_logs" in resumed.offered[-1]


def test_a_tool_may_not_take_the_kernels_name():
    tools = registry()

    @tools.register(name=LOAD)
    async def mine() -> str:
        """Mine."""
        return ""

    with pytest.raises(ValueError, match="'load_tools' is the kernel's own tool: register yours under another name"):
        catalogue_of(tools)


async def test_the_estimated_prompt_counts_the_offer_of_each_turn():
    model = ScriptedModel([text_turn(LOAD, names=list(PURPOSES)), text_turn("finish", answer="done")])
    policy = ContextPolicy(core_tools=1)
    result = await Agent(llm=model, tools=registry(), context=policy).run("checkout logs")
    first, second = (step.prompt_tokens for step in result.steps)
    added = sum(len(json.dumps(spec.model_dump())) for spec in model.requests[1].tools) - sum(
        len(json.dumps(spec.model_dump())) for spec in model.requests[0].tools
    )
    assert second - first > added // 4 - 50 > 0


async def test_read_output_is_offered_from_the_turn_after_an_observation_was_cut():
    long_output = ToolRegistry()

    @long_output.register
    async def search_logs(service: str) -> str:
        """Search a service's logs."""
        return "\n".join(f"line {i}: upstream connect error" for i in range(2000))

    model = ScriptedModel(
        [
            text_turn("search_logs", service="checkout"),
            text_turn("read_output", handle="o1", match="line 1999"),
            text_turn("finish", answer="done"),
        ]
    )
    result = await Agent(llm=model, tools=long_output).run("checkout errors")
    assert [["read_output" in names for names in offered(model)]] == [[False, True, True]]
    assert "…[truncated about" in result.steps[0].observation
    assert result.steps[1].observation.startswith("[output o1: 1 of 2000 lines contain 'line 1999']")
