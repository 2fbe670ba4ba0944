"""The parts every message is built from: mrkdwn escaping and conversion, size-safe splitting, mentions, links to
steps and sources, ephemerals; every one escaped and within Slack's limits whatever the input."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings

from bot.slack.blocks import Message, ephemeral, no_step_urls, source_links, step_ref, steps_ref
from bot.slack.mrkdwn import escape_mrkdwn, markdown_to_mrkdwn, size, split_mrkdwn, user_ref
from kernel import SourceLink
from samples.slack_messages import adversarial, assert_escaped

CHEAP = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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


def test_steps_link_to_the_viewer_when_there_is_one() -> None:
    def viewer(index: int) -> str:
        return f"https://ops.example/runs/r1?sig=a&b=c#step-{index}"

    assert step_ref(3, no_step_urls) == "step 3"
    assert step_ref(3, viewer) == "<https://ops.example/runs/r1?sig=a&amp;b=c#step-3|step 3>"
    assert steps_ref((4,), no_step_urls) == "step 4"
    assert steps_ref((4, 5), viewer).startswith("steps <https://ops.example/runs/r1?sig=a&amp;b=c#step-4|4>, <")
    assert steps_ref((), viewer) == ""
    assert steps_ref(tuple(range(1, 10)), no_step_urls) == "steps 1, 2, 3, 4, 5, 6, …"


def test_source_links_are_web_links_with_escaped_labels_and_safe_urls() -> None:
    links = (
        SourceLink("graph <!channel>", "https://prom.example/graph?g0.expr=rate(x[5m])|<b>&g0.range_input=30m"),
        SourceLink("evil", "javascript:alert(1)"),
        SourceLink("huge", "https://prom.example/" + "q" * 5000),
        SourceLink("logs", "https://grafana.example/explore"),
        SourceLink("diff", "https://github.example/o/r/compare/a...b"),
        SourceLink("file", "https://github.example/o/r/blob/v1/f"),
    )
    shown = source_links(links)
    assert shown == (
        "<https://prom.example/graph?g0.expr=rate(x[5m])%7C%3Cb%3E&amp;g0.range_input=30m|graph &lt;!channel&gt;>"
        " · <https://grafana.example/explore|logs> · <https://github.example/o/r/compare/a...b|diff>"
    ), "no script link, no link that would crowd the message out, at most three"
    assert_escaped(shown)


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


@CHEAP
@given(text=adversarial)
def test_markdown_conversion_is_always_escaped_and_balanced(text: str) -> None:
    out = markdown_to_mrkdwn(text)
    assert_escaped(out)
    assert out.count("```") == sum(1 for line in out.split("\n") if line == "```")
    for chunk in split_mrkdwn(out, 3000):
        assert size(chunk) <= 3000
        assert sum(1 for line in chunk.split("\n") if line == "```") % 2 == 0
