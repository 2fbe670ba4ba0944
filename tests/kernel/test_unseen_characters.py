"""Characters a person cannot see (zero-width, bidi controls, separators) are shown as escapes wherever a call is
rendered for people, and refused in the arguments of a side effect, which someone must approve by reading them.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.slack.approval_blocks import approval_request
from kernel import (
    ApprovalRequest,
    Approved,
    CallContext,
    Dispatcher,
    ErrorKind,
    RunControl,
    SideEffectMode,
    SideEffectPolicy,
    ToolCall,
    ToolRegistry,
    tool_from_function,
)
from kernel.calls import unseen
from kernel.redaction import DEFAULT_REDACTOR

UNSEEN = [
    "\u200b",  # zero width space
    "\u200c",  # zero width non-joiner
    "\u200d",  # zero width joiner
    "\u200e",  # left-to-right mark
    "\u202a",  # left-to-right embedding
    "\u202e",  # right-to-left override
    "\u2066",  # left-to-right isolate
    "\u2069",  # pop directional isolate
    "\u2060",  # word joiner
    "\ufeff",  # byte order mark
    "\u00ad",  # soft hyphen
    "\u2028",  # line separator
    "\u3164",  # hangul filler
    "\ufe0f",  # variation selector
    "\U000e0041",  # tag latin capital a
    "\x1b",  # escape
]
"""One of each kind: each would make the approver read something other than what the webhook receives."""
visible_text = st.text(st.characters(categories=["L", "N", "P", "Zs"]), max_size=12)
with_unseen = st.tuples(visible_text, st.sampled_from(UNSEEN), visible_text).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["service", "to_version", "reason"]), with_unseen, min_size=1))
def test_a_rendered_call_shows_every_unseen_character_as_an_escape(args: dict[str, str]) -> None:
    rendered = ToolCall(name="rollback_deployment", args=args).render()
    assert not any(unseen(char) for char in rendered)
    for value in args.values():
        for char in value:
            if unseen(char):
                code = ord(char)
                assert (f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}") in rendered


def test_ordinary_text_renders_as_it_is() -> None:
    call = ToolCall(name="restart_service", args={"service": "café-api", "note": "日本 ok — 5 × 2"})
    assert call.render() == 'restart_service(service="café-api", note="日本 ok — 5 × 2")'


def test_the_approval_message_shows_the_override_and_never_the_raw_character() -> None:
    call = ToolCall(name="rollback_deployment", args={"service": "order-service", "to_version": "v2.13\u202e2.1"})
    request = ApprovalRequest(run_id="r1", step=3, call=call, args_hash=call.args_hash(), thought="", description="")
    message = approval_request(
        request, "apv_1", expires_at=datetime(2026, 11, 30, tzinfo=UTC), requester="U1", approvers="<@U0BOB42>"
    )
    shown = str(message.blocks) + message.text
    assert "\u202e" not in shown
    assert "v2.13\\u202e2.1" in shown


async def test_a_side_effect_with_unseen_characters_is_refused_before_anyone_is_asked() -> None:
    asked: list[ApprovalRequest] = []

    async def confirm(request: ApprovalRequest) -> Approved:
        asked.append(request)
        return Approved(by="U1", args_hash=request.args_hash)

    async def rollback_deployment(service: str, to_version: str) -> str:
        """Roll a service back."""
        return f"rolled {service} back to {to_version}"

    async def search_logs(query: str) -> str:
        """Search logs."""
        return f"0 lines for {query!r}"

    registry = ToolRegistry(
        [tool_from_function(rollback_deployment, side_effect=True), tool_from_function(search_logs)]
    )
    dispatcher = Dispatcher(
        registry,
        policy=SideEffectPolicy(mode=SideEffectMode.FULL),
        confirm=confirm,
        redactor=DEFAULT_REDACTOR,
        control=RunControl(),
    )
    hidden = ToolCall(name="rollback_deployment", args={"service": "pay\u200bments", "to_version": "v1\u202e2"})
    refused = await dispatcher.dispatch(hidden, CallContext(run_id="r", step=1, call=hidden))
    assert refused.error is not None
    assert refused.error.kind is ErrorKind.BAD_ARGS
    assert f"U+200B {unicodedata.name(chr(0x200B))} at position 3 of service" in refused.text
    assert "U+202E RIGHT-TO-LEFT OVERRIDE at position 2 of to_version" in refused.text
    assert "Call again with the arguments written without them" in refused.text
    assert asked == []
    plain = ToolCall(name="rollback_deployment", args={"service": "payments", "to_version": "v1.2"})
    done = await dispatcher.dispatch(plain, CallContext(run_id="r", step=2, call=plain))
    assert done.error is None
    assert [request.call for request in asked] == [plain]
    read = ToolCall(name="search_logs", args={"query": "a\u200bb"})  # reading changes nothing: not refused
    assert (await dispatcher.dispatch(read, CallContext(run_id="r", step=3, call=read))).error is None
