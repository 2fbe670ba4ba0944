"""The bounded conversation: old observations are elided to stubs, and stay readable by handle."""

from __future__ import annotations

from kernel import Agent, ContextPolicy, ScriptedModel, native_turn, text_turn
from kernel.observations import ObservationStore
from kernel.text_protocol import messages_as_text, prepare_conversation
from kernel.tokens import estimate_tokens


async def test_old_observations_are_elided_and_remain_readable(tools):
    calls = [text_turn("search_logs", service=f"s{i}", query="huge") for i in range(4)]
    read = text_turn("read_output", handle="o1", offset=0)
    model = ScriptedModel([*calls, read, text_turn("finish", answer="a")])
    policy = ContextPolicy(obs_limit_tokens=1000, high_water_tokens=2500, low_water_tokens=1200, keep_recent=1)
    result = await Agent(llm=model, tools=tools, context=policy).run("t")
    assert result.ok
    last_view = model.requests[-1].messages
    elided = [m.content for m in last_view if "elided from view" in m.content]
    assert elided, "the oldest observations were replaced by stubs"
    assert 'read_output(handle="o1") shows it in full' in elided[0]
    # The stub keeps the first line, so the gist stays in view.
    assert "ERROR upstream connect error #0" in elided[0]
    page = result.steps[4].observation
    assert page.startswith('[output o1: characters 0-3760 of 166889; next page: read_output(handle="o1", offset=3760)]')
    assert "…[truncated" not in page, "a page always fits the observation limit"
    # Prompts stop growing once compaction kicks in.
    sizes = [sum(len(m.content) for m in r.messages) for r in model.requests]
    assert max(sizes[3:]) < sizes[2] * 1.5


async def test_prefix_is_stable_between_compactions(tools):
    calls = [text_turn("query_metrics", service=f"s{i}") for i in range(3)]
    model = ScriptedModel([*calls, text_turn("finish", answer="a")])
    await Agent(llm=model, tools=tools).run("t")
    first, later = model.requests[1].messages, model.requests[3].messages
    assert later[: len(first)] == first
    assert model.requests[0].instructions == model.requests[3].instructions


def test_pages_of_dense_text_fit_the_limit():
    store = ObservationStore(page_tokens=1000)
    store.keep("o1", "事件" * 5000)
    page = store.page("o1")
    assert estimate_tokens(page) <= 1000
    assert page.startswith("[output o1: characters 0-")


async def test_the_turn_just_asked_for_is_never_elided(tools):
    calls = [("search_logs", {"service": f"s{i}", "query": "huge"}) for i in range(6)]
    model = ScriptedModel([native_turn(*calls), text_turn("finish", answer="a")])
    policy = ContextPolicy(obs_limit_tokens=1000, high_water_tokens=2500, low_water_tokens=1200, keep_recent=1)
    await Agent(llm=model, tools=tools, context=policy).run("t")
    replies = [m for m in model.requests[1].messages if m.role == "tool"]
    assert len(replies) == 6
    assert not [m for m in replies if "elided from view" in m.content]


async def test_the_text_form_of_the_history_is_converted_once_a_message_and_matches_a_full_conversion(tools):
    """Each turn's text-protocol history comes from the conversation's per-message cache: it must equal converting
    the whole history afresh, elided observations included."""
    seen: list[tuple[list, list]] = []

    def turn(reply):
        def answer(request):
            seen.append((prepare_conversation(request, native_tools=False)[1], messages_as_text(request.messages)))
            return reply

        return answer

    calls = [native_turn(("search_logs", {"service": f"s{i}", "query": "huge"}), start_id=i * 10) for i in range(4)]
    model = ScriptedModel(
        [*(turn(call) for call in calls), turn(native_turn(("finish", {"answer": "a"}), start_id=99))]
    )
    policy = ContextPolicy(obs_limit_tokens=1000, high_water_tokens=2500, low_water_tokens=1200, keep_recent=1)
    result = await Agent(llm=model, tools=tools, context=policy).run("t")
    assert result.ok
    assert [cached for cached, _ in seen] == [fresh for _, fresh in seen]
    last = seen[-1][0]
    assert any("elided from view" in m.content for m in last), "an elided observation is converted again"
    assert any(m.content.startswith("Observation (search_logs):") for m in last), "tool results became text"
