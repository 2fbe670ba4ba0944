"""The text protocol's catalogue, as an adapter sends it: the same text for the same tools, rendered once per tool
set (every turn of every run on it sends it; the saving is in bench suite a), and still right for specs that
change or come as a list."""

from __future__ import annotations

from kernel import ChatRequest, ToolSpec
from kernel.text_protocol import prepare_conversation, render_text_protocol

METRICS = ToolSpec(name="query_metrics", description="Query a metric.", parameters={"type": "object", "properties": {}})
LOGS = ToolSpec(name="search_logs", description="Search logs.", parameters={"type": "object", "properties": {}})


def system_of(tools: object) -> str:
    system, _ = prepare_conversation(ChatRequest("Be brief.", tools, []), native_tools=False)  # type: ignore[arg-type]
    return system


def test_a_tool_set_sends_exactly_its_catalogue_turn_after_turn():
    specs = (METRICS, LOGS)
    expected = "Be brief.\n\n" + render_text_protocol(specs)
    assert [system_of(specs) for _ in range(3)] == [expected] * 3


def test_another_tool_set_or_a_list_gets_its_own_catalogue():
    assert "search_logs" not in system_of((METRICS,))
    assert "search_logs" in system_of((METRICS, LOGS))
    listed = [METRICS]
    assert system_of(listed) == "Be brief.\n\n" + render_text_protocol(listed)
    listed.append(LOGS)
    assert "search_logs" in system_of(listed), "a list can change: it is rendered each time"
