"""What every message the bot builds must keep, for the Block Kit builders' tests: Slack's documented limits, the
validation of slack_sdk's own models, and our escaping (the only `<…>` are our own mentions, dates and links);
plus hostile text to feed the builders."""

from __future__ import annotations

import re

import pytest
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block

from bot.slack.blocks import Message
from bot.slack.mrkdwn import size

ALLOWED_ANGLES = re.compile(
    r"<@[UW][A-Z0-9]+>|<!subteam\^S[A-Z0-9]+>|<!date\^\d+\^[^|<>]+\|[^<>]+>|<(?:https?|mailto):[^\s<>|]+(?:\|[^<>]*)?>"
)
HOSTILE = "<!channel> <!here> <@U0EVIL99> <!subteam^S0EVIL> <#C0EVIL> <https://evil.example|your bank> & &amp; ``` `"
"""Text that would ping, mention, link or break out of code if it reached Slack unescaped."""
FRAGMENTS = ["<!channel>", "<@U123>", "&", "&amp;", "<", ">", "`", "```", "```\n", "\n", "> ", "*", "**", "_", "~~"]
FRAGMENTS += ["[a](https://x.io/?a=1&b=<2>)", "<https://y.io>", "# h", "- ", "😀", "é", " ", "x", "|", "\\", "\r\n"]
_piece = st.sampled_from(FRAGMENTS) | st.text(max_size=20)
adversarial = st.builds(
    lambda parts, repeat: "".join(parts) * repeat,
    st.lists(_piece, max_size=30),
    st.sampled_from([1, 1, 1, 7, 150, 400]),
)
"""Strings of every size Slack cares about, made of the characters that break mrkdwn."""


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
    """Slack accepts the message (every documented limit, slack_sdk's validators) and every text is escaped."""
    assert isinstance(message.text, str)
    assert 0 < size(message.text) <= 4000
    assert 0 < len(message.blocks) <= 50
    ids = [block["block_id"] for block in message.blocks]
    assert len(set(ids)) == len(ids)
    assert all(0 < len(i) <= 255 for i in ids)
    action_ids: list[str] = []
    for block in message.blocks:
        match block["type"]:
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
            case "context_actions":
                [feedback] = block["elements"]
                assert feedback["type"] == "feedback_buttons"
                for thumb in (feedback["positive_button"], feedback["negative_button"]):
                    assert 0 < size(thumb["value"]) <= 2000
                    assert size(thumb["text"]["text"]) <= 75
            case other:
                pytest.fail(f"unexpected block type {other}")
        parsed = Block.parse(block)
        assert parsed is not None
        assert parsed.to_dict() == block  # to_dict() runs every slack_sdk validator
    assert len(set(action_ids)) == len(action_ids)
    for text in texts_of(message):
        assert_escaped(text)
        lines = text.split("\n")
        fences = sum(1 for line in lines if line == "```")
        assert fences % 2 == 0, text
        assert text.count("```") == fences, text
    assert_escaped(message.text)


def assert_escaped(text: str) -> None:
    """No bare `&`, and the only `<…>` are our own mentions, dates and http(s)/mailto links."""
    assert not re.search(r"&(?!amp;|lt;|gt;)", text), text
    assert "<" not in ALLOWED_ANGLES.sub("", text), text
    assert ">" not in re.sub(r"^> ?", "", ALLOWED_ANGLES.sub("", text), flags=re.MULTILINE), text


def assert_no_hostile_tokens(message: Message) -> None:
    """None of `HOSTILE`'s pings, mentions or links survive in any text of the message."""
    for text in [*texts_of(message), message.text]:
        for token in ("<!channel>", "<!here>", "<@U0EVIL99>", "<!subteam^S0EVIL>", "<#C0EVIL>", "<https://evil"):
            assert token not in text, text
