"""Block Kit builders: exact structures for the main messages, Slack's limits under any sizes, and escaping.

Every message built here is checked against Slack's documented limits and validated by slack_sdk's models.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block

from bot.slack.blocks import (
    Message,
    approval_decided,
    approval_request,
    ephemeral,
    final_message,
    run_header,
    step_message,
)
from bot.slack.mrkdwn import escape_mrkdwn, literal, markdown_to_mrkdwn, size, split_mrkdwn, user_ref
from bot.words import stop_reason_words
from kernel import ApprovalRecord, ApprovalRequest, ErrorKind, RunResult, Step, StopReason, ToolCall, Usage

AT = datetime(2026, 11, 30, 4, 30, tzinfo=UTC)
UNIX = 1796013000
ROLLBACK = ToolCall(name="rollback_deployment", args={"service": "order-service", "to_version": "v2.13.2"})
ALLOWED_ANGLES = re.compile(
    r"<@[UW][A-Z0-9]+>|<!date\^\d+\^[^|<>]+\|[^<>]+>|<(?:https?|mailto):[^\s<>|]+(?:\|[^<>]*)?>"
)


# ---------------------------------------------------------------- the limits every message must keep


def texts_of(message: Message) -> list[str]:
    """Every mrkdwn string in the message's blocks."""
    out = []
    for block in message.blocks:
        if block["type"] == "section":
            out.append(block["text"]["text"])
        elif block["type"] == "context":
            out += [e["text"] for e in block["elements"] if e["type"] == "mrkdwn"]
    return out


def assert_within_limits(message: Message) -> None:
    assert isinstance(message.text, str)
    assert 0 < size(message.text) <= 4000
    assert 0 < len(message.blocks) <= 50
    ids = [block["block_id"] for block in message.blocks]
    assert len(set(ids)) == len(ids)
    assert all(0 < len(i) <= 255 for i in ids)
    action_ids: list[str] = []
    for block in message.blocks:
        match block["type"]:
            case "header":
                assert block["text"]["type"] == "plain_text"
                assert 0 < size(block["text"]["text"]) <= 150
            case "section":
                assert block["text"]["type"] == "mrkdwn"
                assert block["text"]["text"].strip()
                assert size(block["text"]["text"]) <= 3000
            case "context":
                assert 0 < len(block["elements"]) <= 10
                assert all(size(e["text"]) <= 2000 for e in block["elements"])
            case "actions":
                assert 0 < len(block["elements"]) <= 25
                for button in block["elements"]:
                    action_ids.append(button["action_id"])
                    assert len(button["action_id"]) <= 255
                    assert size(button["text"]["text"]) <= 75
                    assert 0 < size(button["value"]) <= 2000
                    if confirm := button.get("confirm"):
                        assert size(confirm["title"]["text"]) <= 100
                        assert size(confirm["text"]["text"]) <= 300
                        assert size(confirm["confirm"]["text"]) <= 30
                        assert size(confirm["deny"]["text"]) <= 30
            case other:
                pytest.fail(f"unexpected block type {other}")
        parsed = Block.parse(block)
        assert parsed is not None
        assert parsed.to_dict() == block  # to_dict() runs every slack_sdk validator
    assert len(set(action_ids)) == len(action_ids)
    for text in [*texts_of(message), message.text]:
        assert_escaped(text)
    for text in texts_of(message):
        lines = text.split("\n")
        fences = sum(1 for line in lines if line == "```")
        assert fences % 2 == 0, text
        assert text.count("```") == fences, text


def assert_escaped(text: str) -> None:
    """No bare `&`, and the only `<…>` are our own mentions, dates and http(s)/mailto links."""
    assert not re.search(r"&(?!amp;|lt;|gt;)", text), text
    assert "<" not in ALLOWED_ANGLES.sub("", text), text
    assert ">" not in re.sub(r"^> ?", "", ALLOWED_ANGLES.sub("", text), flags=re.MULTILINE), text


# ---------------------------------------------------------------- escaping and Markdown


def test_escape_mrkdwn_neutralises_control_sequences() -> None:
    assert escape_mrkdwn("<!channel> & <@U123> <https://evil|bank>") == (
        "&lt;!channel&gt; &amp; &lt;@U123&gt; &lt;https://evil|bank&gt;"
    )
    assert escape_mrkdwn("&amp;") == "&amp;amp;"


def test_markdown_to_mrkdwn_converts_the_common_forms() -> None:
    source = (
        "# Root cause\n"
        "**Pool** cut to *10* (~~50~~), see [runbook](https://wiki/x?a=1&b=2) and <https://grafana/d>.\n"
        "- first\n"
        "* second\n"
        "> quoted <b>\n"
        "Use `a < b && c` here, or [bad](javascript:alert(1))."
    )
    assert markdown_to_mrkdwn(source) == (
        "*Root cause*\n"
        "*Pool* cut to _10_ (~50~), see <https://wiki/x?a=1&amp;b=2|runbook> and <https://grafana/d>.\n"
        "• first\n"
        "• second\n"
        "> quoted &lt;b&gt;\n"
        "Use `a &lt; b &amp;&amp; c` here, or bad (javascript:alert(1))."
    )


def test_markdown_to_mrkdwn_keeps_code_blocks_and_neutralises_backticks_inside() -> None:
    source = "Before\n```yaml\npool:\n  max_size: 10  # `old` was 50 <!here>\n```\nAfter ```x```"
    assert markdown_to_mrkdwn(source) == (
        "Before\n```\npool:\n  max_size: 10  # ˋoldˋ was 50 &lt;!here&gt;\n```\nAfter `x`"
    )
    assert markdown_to_mrkdwn("```\nunclosed <@U1>") == "```\nunclosed &lt;@U1&gt;\n```"
    assert markdown_to_mrkdwn("a `` b ` c `` d") == "a `b ˋ c` d"
    assert markdown_to_mrkdwn("# Title ##\n#not a heading") == "*Title*\n#not a heading"


def test_markdown_links_cannot_break_out_of_the_link() -> None:
    out = markdown_to_mrkdwn("[x](https://a/b|c>d<!channel>)")
    assert out == "<https://a/b%7Cc%3Ed%3C!channel%3E|x>"
    assert_escaped(out)


def test_split_mrkdwn_closes_and_reopens_fences_and_keeps_entities_whole() -> None:
    text = "intro\n```\n" + "\n".join(f"line {i} &amp; more" for i in range(200)) + "\n```\noutro"
    chunks = split_mrkdwn(text, 500)
    assert len(chunks) > 3
    for chunk in chunks:
        assert size(chunk) <= 500
        assert chunk.count("```") % 2 == 0
        assert not re.search(r"&(?!amp;|lt;|gt;)", chunk)
    assert chunks[0].startswith("intro\n```\nline 0")
    assert chunks[-1].endswith("```\noutro")
    body = "".join(chunks).replace("```", "").replace("\n", "")
    assert body == text.replace("```", "").replace("\n", "")


def test_split_mrkdwn_cuts_long_lines_and_keeps_quote_marks() -> None:
    chunks = split_mrkdwn("> " + "&amp;" * 1000, 300)
    assert all(size(c) <= 300 and c.startswith("> ") for c in chunks)
    assert "".join(c[2:] for c in chunks) == "&amp;" * 1000


def test_user_ref_mentions_only_slack_ids() -> None:
    assert user_ref("U0ALICE") == "<@U0ALICE>"
    assert user_ref("W012AB3CD") == "<@W012AB3CD>"
    assert user_ref("USA") == "USA"
    assert user_ref("<!channel> ```") == "&lt;!channel&gt; ˋˋˋ"
    assert user_ref(None) == "someone"


# ---------------------------------------------------------------- exact structures


def test_run_header_structure() -> None:
    message = run_header("run42", "order-service 5xx <!channel>", "U0ALICE")
    assert message.text == "🔎 Investigating: order-service 5xx &lt;!channel&gt;"
    assert message.blocks == [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": "🔎 Investigating: order-service 5xx <!channel>", "emoji": True},
            "block_id": "run.run42.live.0",
        },
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": "Run `run42` · requested by <@U0ALICE>"}],
            "block_id": "run.run42.live.1",
        },
        {
            "type": "actions",
            "block_id": "run.run42.stop",
            "elements": [
                {
                    "type": "button",
                    "action_id": "opsagent_stop",
                    "text": {"type": "plain_text", "text": "⏹ Stop", "emoji": True},
                    "value": "run42",
                    "style": "danger",
                    "confirm": {
                        "title": {"type": "plain_text", "text": "Stop this investigation?"},
                        "text": {
                            "type": "plain_text",
                            "text": "OpsAgent stops run run42 and voids its pending approvals.",
                        },
                        "confirm": {"type": "plain_text", "text": "Stop"},
                        "deny": {"type": "plain_text", "text": "Keep running"},
                        "style": "danger",
                    },
                }
            ],
        },
    ]
    assert_within_limits(message)


def test_run_header_when_ended_has_no_stop_button_and_new_block_ids() -> None:
    live = run_header("run42", "x" * 400, "alice (terminal)")
    ended = run_header("run42", "x" * 400, "alice (terminal)", ended=StopReason.CANCELLED)
    assert [b["type"] for b in live.blocks] == ["header", "section", "context", "actions"]
    assert [b["type"] for b in ended.blocks] == ["header", "section", "context"]
    assert (
        ended.blocks[2]["elements"][0]["text"]
        == "Run `run42` · requested by alice (terminal) · ended: stopped by a user"
    )
    assert not {b["block_id"] for b in live.blocks} & {b["block_id"] for b in ended.blocks}
    for message in (live, ended):
        assert_within_limits(message)


def test_step_message_structure() -> None:
    step = Step(
        index=2,
        turn=1,
        thought="Who returns the 5xx? <@U999> said the gateway.",
        call=ToolCall(name="search_logs", args={"service": "gateway", "query": "`status=503`"}),
        observation="04:34:23Z ERROR status=503 upstream <!channel>\n" + "x" * 2000,
        ms=1534.0,
    )
    message = step_message(step, excerpt_chars=60)
    assert message.text == '✓ Step 2: search_logs(service="gateway", query="`status=503`")'
    assert [b["text"]["text"] for b in message.blocks] == [
        '✓ *Step 2* · 1.5 s\n```\nsearch_logs(service="gateway", query="ˋstatus=503ˋ")\n```',
        "> Who returns the 5xx? &lt;@U999&gt; said the gateway.",
        "```\n04:34:23Z ERROR status=503 upstream &lt;!channel&gt;\nxxxxxxxxxxxxx\n```\n"
        "_… 1,987 more characters in the trace_",
    ]
    assert [b["block_id"] for b in message.blocks] == ["step.2.0", "step.2.1", "step.2.2"]
    assert_within_limits(message)


def test_step_message_for_errors_approvals_and_format_errors() -> None:
    denied = Step(
        index=6,
        turn=5,
        call=ROLLBACK,
        error=ErrorKind.DENIED,
        observation="",
        ms=3.0,
        approval=ApprovalRecord(decision="denied", by="U0BOB42", at=AT, reason="not <now>"),
    )
    message = step_message(denied)
    assert message.blocks[0]["text"]["text"].startswith("✗ *Step 6* · denied · 3 ms\n```\nrollback_deployment(")
    assert message.blocks[1]["text"]["text"] == "_(no output)_"
    assert message.blocks[2]["elements"][0]["text"] == (
        f"🔐 Denied by <@U0BOB42> at <!date^{UNIX}^{{date_short_pretty}} {{time}}|2026-11-30 04:30 UTC>: not &lt;now&gt;"
    )
    pending = step_message(Step(index=6, turn=5, call=ROLLBACK, approval=ApprovalRecord(decision="pending")))
    assert pending.blocks[0]["text"]["text"].startswith("⏳ *Step 6* · waiting for approval · 0 ms")
    assert pending.blocks[-1]["elements"][0]["text"] == "🔐 Waiting for an approval"
    unusable = step_message(Step(index=3, turn=2, error=ErrorKind.FORMAT, observation="[FormatError] no action"))
    assert unusable.blocks[0]["text"]["text"] == "⚠️ *Step 3* · the model's reply had no usable action"
    assert unusable.text == "✗ Step 3: no usable action"
    prose = step_message(Step(index=4, turn=3, thought="Root cause: <!channel> v2.14.0", observation="If this is…"))
    assert prose.blocks[0]["text"]["text"] == "💬 *Step 4* · the model answered in prose; asked to confirm"
    assert prose.blocks[1]["text"]["text"] == "> Root cause: &lt;!channel&gt; v2.14.0"
    assert prose.text == "✓ Step 4: prose answer"
    for m in (message, pending, unusable, prose):
        assert_within_limits(m)


def approval(thought: str = "v2.14.0 cut the pool; roll back", call: ToolCall = ROLLBACK) -> ApprovalRequest:
    return ApprovalRequest(
        run_id="run42", step=6, call=call, args_hash=call.args_hash(), thought=thought, description="Roll back."
    )


def test_approval_request_structure() -> None:
    message = approval_request(approval(), "apv_7f3a", expires_at=AT + timedelta(minutes=15), requester="U0ALICE")
    expiry = f"<!date^{UNIX + 900}^{{date_short_pretty}} {{time}}|2026-11-30 04:45 UTC>"
    assert message.blocks[:5] == [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": "🔐 Approval needed: rollback_deployment", "emoji": True},
            "block_id": "approval.apv_7f3a.request.0",
        },
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": "OpsAgent wants to run this (run `run42`, step 6):\n"
                '```\nrollback_deployment(service="order-service", to_version="v2.13.2")\n```',
            },
            "block_id": "approval.apv_7f3a.request.1",
        },
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "*What it does:* Roll back."},
            "block_id": "approval.apv_7f3a.request.2",
        },
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "*Why:*\n> v2.14.0 cut the pool; roll back"},
            "block_id": "approval.apv_7f3a.request.3",
        },
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": f"⌛ Expires {expiry} · run requested by <@U0ALICE> · call hash `{ROLLBACK.args_hash()[:12]}`",
                }
            ],
            "block_id": "approval.apv_7f3a.request.4",
        },
    ]
    actions = message.blocks[5]
    assert actions["block_id"] == "approval.apv_7f3a.request.actions"
    approve, deny = actions["elements"]
    assert (approve["action_id"], approve["style"], approve["value"]) == ("opsagent_approve", "primary", "apv_7f3a")
    assert (deny["action_id"], deny["style"], deny["value"]) == ("opsagent_deny", "danger", "apv_7f3a")
    assert approve["confirm"]["text"]["text"] == "Run rollback_deployment(…)? This changes production."
    assert approve["confirm"]["style"] == "danger"
    assert "confirm" not in deny
    assert_within_limits(message)


def test_approval_buttons_carry_only_the_opaque_id_and_long_ids_are_hashed_in_block_ids() -> None:
    long_id = "a/b " * 400
    message = approval_request(approval(), long_id, expires_at=AT, requester=None)
    buttons = message.blocks[-1]["elements"]
    assert [b["value"] for b in buttons] == [long_id, long_id]
    assert all(long_id not in b["block_id"] for b in message.blocks)
    assert_within_limits(message)
    with pytest.raises(ValueError, match="approval_id"):
        approval_request(approval(), "x" * 2001, expires_at=AT, requester=None)
    with pytest.raises(ValueError, match="approval_id"):
        approval_request(approval(), "", expires_at=AT, requester=None)


def test_approval_request_with_arguments_too_long_says_so() -> None:
    call = ToolCall(name="run_script", args={"script": "echo hi\n" * 5000})
    message = approval_request(approval(call=call), "apv_1", expires_at=AT, requester="U1")
    assert any("too long to show in full" in t for t in texts_of(message))
    ticks = approval_request(
        approval(call=ToolCall(name="sh", args={"cmd": "echo `id`"})), "a1", expires_at=AT, requester=None
    )
    assert ticks.blocks[1]["text"]["text"].endswith(
        "_Backticks in the arguments are shown as ˋ so they cannot end the code block._"
    )
    assert_within_limits(message)


@pytest.mark.parametrize(
    ("decision", "by", "reason", "line"),
    [
        (
            "approved",
            "U0BOB42",
            "",
            f"✅ Approved by <@U0BOB42> at <!date^{UNIX}^{{date_short_pretty}} {{time}}|2026-11-30 04:30 UTC>",
        ),
        (
            "denied",
            "U0BOB42",
            "wrong <version>",
            f"❌ Denied by <@U0BOB42> at <!date^{UNIX}^{{date_short_pretty}} {{time}}|2026-11-30 04:30 UTC>: "
            "wrong &lt;version&gt;",
        ),
        (
            "expired",
            None,
            "",
            "⌛ Expired: not approved within 15 min (treated as a denial) · "
            f"<!date^{UNIX}^{{date_short_pretty}} {{time}}|2026-11-30 04:30 UTC>",
        ),
        (
            "voided",
            None,
            "",
            f"⏹ Voided: the run was stopped · <!date^{UNIX}^{{date_short_pretty}} {{time}}|2026-11-30 04:30 UTC>",
        ),
    ],
)
def test_approval_decided(decision: Any, by: str | None, reason: str, line: str) -> None:
    summary = ROLLBACK.render()
    message = approval_decided(summary, decision, by, AT, reason, approval_id="apv_7f3a")
    assert [b["type"] for b in message.blocks] == ["section", "context"]
    assert message.blocks[0]["text"]["text"] == f"*Action:*\n```\n{escape_mrkdwn(summary)}\n```"
    assert message.blocks[1]["elements"][0]["text"] == line
    request = approval_request(approval(), "apv_7f3a", expires_at=AT, requester=None)
    assert not {b["block_id"] for b in message.blocks} & {b["block_id"] for b in request.blocks}
    assert_within_limits(message)


def result(**changes: Any) -> RunResult:
    steps = [
        Step(index=1, turn=0, call=ToolCall(name="query_metrics", args={"service": "order-service"}), ms=20),
        Step(index=2, turn=1, call=ToolCall(name="search_logs", args={"service": "gateway"}), ms=30),
        Step(index=3, turn=2, call=None, error=ErrorKind.FORMAT),
        Step(index=4, turn=3, call=ROLLBACK, error=ErrorKind.DENIED),
    ]
    fields: dict[str, Any] = {
        "run_id": "run42",
        "task": "why 5xx?",
        "stop_reason": StopReason.FINISH,
        "answer": "**Root cause**: pool cut (steps 1-2, step 9).",
        "steps": steps,
        "usage": Usage(steps=4, turns=4, prompt_tokens=32058, cost_usd=0.0123, elapsed_s=75.2),
    }
    return RunResult(**(fields | changes))


def test_final_message_success_structure() -> None:
    [message] = final_message(result(), trace_name="run42.json")
    assert message.text == "✅ Investigation finished: why 5xx?"
    assert [b["text"]["text"] if b["type"] == "section" else b["elements"][0]["text"] for b in message.blocks] == [
        "✅ *Investigation finished:* why 5xx?",
        "*Root cause*: pool cut (steps 1-2, step 9).",
        "*Evidence cited:*\n"
        '• Step 1 ✓ `query_metrics(service="order-service")`\n'
        '• Step 2 ✓ `search_logs(service="gateway")`\n'
        "⚠️ The answer cites step(s) 9, which the trace does not have.",
        "4 steps · 32,058 prompt tokens · $0.0123 · 1 min 15 s · stop: finish · run `run42` · trace `run42.json`",
    ]
    assert_within_limits(message)


def test_the_footer_shows_a_cost_only_when_the_model_has_a_price() -> None:
    unpriced = Usage(steps=4, turns=4, prompt_tokens=32058, cost_usd=0.0, elapsed_s=75.2)
    [message] = final_message(result(usage=unpriced), trace_name=None)
    footer = message.blocks[-1]["elements"][0]["text"]
    assert footer == "4 steps · 32,058 prompt tokens · 1 min 15 s · stop: finish · run `run42`"


def test_final_message_failure_says_so_first_and_labels_the_partial_answer() -> None:
    [message] = final_message(
        result(stop_reason=StopReason.MAX_STEPS, answer=None, partial_answer="Probably the pool.", detail="20 steps"),
        trace_name=None,
    )
    assert message.text == "❌ Investigation stopped: the step budget (4) ran out"
    assert message.blocks[0]["text"]["text"] == (
        "❌ *Investigation stopped:* the step budget (4) ran out — 20 steps\n"
        "⚠️ *Not a final answer.* What the agent knew when it stopped:"
    )
    assert message.blocks[1]["text"]["text"] == "Probably the pool."
    assert message.blocks[2]["elements"][0]["text"] == "_The answer cites no step; the trace has all 4._"
    assert message.blocks[-1]["elements"][0]["text"].endswith("stop: max_steps · run `run42`")
    assert_within_limits(message)
    [paused] = final_message(result(stop_reason=StopReason.AWAITING_APPROVAL, answer=None), trace_name=None)
    assert paused.blocks[0]["text"]["text"] == "⏸ *Investigation paused:* waiting for an approval"


def test_long_answers_split_across_messages_without_breaking_code_fences() -> None:
    answer = "## Findings\n" + ("Some text & more. " * 300 + "\n```\n" + "log line <x>\n" * 400 + "```\n") * 4
    messages = final_message(result(answer=answer), trace_name="t.json", max_messages=10)
    assert len(messages) > 1
    assert messages[1].blocks[0]["elements"][0]["text"] == f"_Continued: part 2 of {len(messages)}_"
    assert messages[-1].blocks[-1]["elements"][0]["text"].startswith("4 steps")
    for message in messages:
        assert_within_limits(message)
    code_lines = sum(t.count("log line &lt;x&gt;") for m in messages for t in texts_of(m))
    assert code_lines == 1600


def test_final_message_respects_max_messages() -> None:
    messages = final_message(result(answer="word " * 200_000), trace_name=None, max_messages=3)
    assert len(messages) == 3
    assert any("cut here" in t for t in texts_of(messages[-1]))
    for message in messages:
        assert_within_limits(message)


def test_every_stop_reason_has_its_own_words() -> None:
    words = {reason: stop_reason_words(reason) for reason in StopReason}
    assert all(words.values())
    assert len(set(words.values())) == len(StopReason)
    assert stop_reason_words(StopReason.MAX_STEPS, steps=20) == "the step budget (20) ran out"
    assert words[StopReason.LOOP_DETECTED] == "it kept repeating the same call"


def test_ephemeral_is_trusted_mrkdwn() -> None:
    message = ephemeral("Already approved by <@U0BOB42>.")
    assert message == Message(
        text="Already approved by <@U0BOB42>.",
        blocks=[
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": "Already approved by <@U0BOB42>."},
                "block_id": "ephemeral.0",
            }
        ],
    )
    assert message.as_kwargs() == {"text": message.text, "blocks": message.blocks}


# ---------------------------------------------------------------- adversarial sizes and characters

FRAGMENTS = ["<!channel>", "<@U123>", "&", "&amp;", "<", ">", "`", "```", "```\n", "\n", "> ", "*", "**", "_", "~~"]
FRAGMENTS += ["[a](https://x.io/?a=1&b=<2>)", "<https://y.io>", "# h", "- ", "😀", "é", " ", "x", "|", "\\", "\r\n"]
piece = st.sampled_from(FRAGMENTS) | st.text(max_size=20)
adversarial = st.builds(
    lambda parts, repeat: "".join(parts) * repeat,
    st.lists(piece, max_size=30),
    st.sampled_from([1, 1, 1, 7, 150, 400]),
)
CHEAP = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@CHEAP
@given(
    thought=adversarial,
    observation=adversarial,
    arg=adversarial,
    excerpt=st.sampled_from([0, 1, 1200, 5000, 10**9]),
    thought_chars=st.sampled_from([0, 2000, 10**9]),
)
def test_step_messages_stay_within_limits(
    thought: str, observation: str, arg: str, excerpt: int, thought_chars: int
) -> None:
    step = Step(
        index=7, turn=3, thought=thought, call=ToolCall(name=arg[:80] or "t", args={"q": arg}), observation=observation
    )
    message = step_message(step, excerpt_chars=excerpt, thought_chars=thought_chars)
    assert_within_limits(message)
    if len(observation) > excerpt:
        assert any("more characters in the trace" in t for t in texts_of(message))


@CHEAP
@given(answer=adversarial, partial=adversarial, detail=adversarial, ok=st.booleans(), pages=st.integers(1, 4))
def test_final_messages_stay_within_limits(answer: str, partial: str, detail: str, ok: bool, pages: int) -> None:
    run = result(
        stop_reason=StopReason.FINISH if ok else StopReason.LOOP_DETECTED,
        answer=answer if ok else None,
        partial_answer=None if ok else partial,
        detail=detail,
        task=detail,
    )
    messages = final_message(run, trace_name=detail[:50] or None, max_messages=pages)
    assert 1 <= len(messages) <= pages
    for message in messages:
        assert_within_limits(message)


@CHEAP
@given(thought=adversarial, arg=adversarial, approval_id=st.text(min_size=1, max_size=2000), who=adversarial)
def test_approval_messages_stay_within_limits(thought: str, arg: str, approval_id: str, who: str) -> None:
    call = ToolCall(name=arg[:300] or "t", args={"x": arg})
    request = approval(thought=thought, call=call)
    asked = approval_request(request, approval_id, expires_at=AT, requester=who or None)
    assert_within_limits(asked)
    assert {b["value"] for b in asked.blocks[-1]["elements"]} == {approval_id}
    for decision in ("approved", "denied", "expired", "voided"):
        decided = approval_decided(call.render(), decision, who or None, AT, thought, approval_id=approval_id)
        assert_within_limits(decided)
    assert_within_limits(run_header(approval_id, arg, who or None))
    assert_within_limits(ephemeral(f"Already decided by {user_ref(who)}: {literal(arg)}"))


@CHEAP
@given(text=adversarial)
def test_markdown_conversion_is_always_escaped_and_balanced(text: str) -> None:
    out = markdown_to_mrkdwn(text)
    assert_escaped(out)
    assert out.count("```") == sum(1 for line in out.split("\n") if line == "```")
    for chunk in split_mrkdwn(out, 3000):
        assert size(chunk) <= 3000
        assert sum(1 for line in chunk.split("\n") if line == "```") % 2 == 0


@pytest.mark.parametrize(
    "text",
    [
        "&" * 300_000,
        "😀" * 100_000,
        ("y" * 1600 + "\n") * 200,
        "```\n" + ("<!channel> " * 400 + "\n") * 100,
        "```\na\n```\n" * 5000,
        "[x](https://a.io/" + "(" * 50_000,
        "**x " * 50_000 + "\n" + "`" * 10_000 + "\n" + "# " + " " * 50_000,
    ],
    ids=["ampersands", "astral", "half-chunk-lines", "fenced-pings", "many-fences", "open-link", "no-closers"],
)
def test_extreme_sizes_stay_within_limits(text: str) -> None:
    step = Step(index=1, turn=0, thought=text, call=ToolCall(name="t", args={"q": text}), observation=text)
    for excerpt in (1200, 10**9):
        assert_within_limits(step_message(step, excerpt_chars=excerpt, thought_chars=10**9))
    messages = final_message(result(answer=text, task=text, detail=text), trace_name=text)
    assert 1 <= len(messages) <= 5
    for message in [*messages, approval_request(approval(text, step.call), "a", expires_at=AT, requester=text)]:
        assert_within_limits(message)
