"""The Slack-thread renderer behind the README's picture: mrkdwn and Block Kit as Slack shows them, untrusted text
kept as text, and the demo investigation posted by the real Slack app, laid out in headless Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.thread_picture import CHROMIUM, USERS, demo_thread, thread_height
from bench.thread_render import Directory, mrkdwn_to_html, render_block, render_thread

OUTPUT = Path(__file__).resolve().parents[2] / "test-output"
PEOPLE = Directory(users={"U07MARIA1": "Maria"})


def test_mrkdwn_becomes_the_html_slack_shows():
    text = (
        "*Root cause*: _v2.14.0_ cut `max_size` ~50~ to 10 :white_check_mark:\n"
        "> the pool is full\n"
        "see <https://grafana.example/d/1|the dashboard> · <@U07MARIA1> <!here> "
        "<!date^1700000000^{date_short_pretty}|2023-11-14 22:13 UTC>\n"
        "```\nmax_size: 10  # <b>not bold</b>\n```"
    )
    assert mrkdwn_to_html(text, PEOPLE) == (
        "<b>Root cause</b>: <i>v2.14.0</i> cut <code>max_size</code> <s>50</s> to 10 ✅<br>"
        "<blockquote>the pool is full</blockquote>"
        'see <a href="https://grafana.example/d/1">the dashboard</a> · <span class="mention">@Maria</span> '
        '<span class="mention">@here</span> 2023-11-14 22:13 UTC'
        "<pre>max_size: 10  # &lt;b&gt;not bold&lt;/b&gt;</pre>"
    )


def test_slacks_escapes_and_hostile_text_stay_text():
    html = mrkdwn_to_html("a &lt;script&gt;alert(1)&lt;/script&gt; &amp; <javascript:x|click> :nope:", PEOPLE)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in html
    assert ":nope:" in html, "an unknown shortcode stays as typed"


def test_every_kind_of_block_the_bot_posts():
    header = render_block({"type": "header", "text": {"type": "plain_text", "text": "🔐 Approval needed"}}, PEOPLE)
    assert header == '<div class="block header">🔐 Approval needed</div>'
    context = render_block({"type": "context", "elements": [{"type": "mrkdwn", "text": "run `abc`"}]}, PEOPLE)
    assert context == '<div class="block context"><span>run <code>abc</code></span></div>'
    buttons = {
        "type": "actions",
        "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "✅ Approve"}, "style": "primary"},
            {"type": "button", "text": {"type": "plain_text", "text": "❌ Deny"}, "style": "danger"},
        ],
    }
    assert render_block(buttons, PEOPLE) == (
        '<div class="block actions"><span class="button primary">✅ Approve</span>'
        '<span class="button danger">❌ Deny</span></div>'
    )
    fields = {
        "type": "section",
        "fields": [{"type": "mrkdwn", "text": "*Severity*"}, {"type": "plain_text", "text": "page"}],
    }
    assert '<div class="fields"><div><b>Severity</b></div><div>page</div></div>' in render_block(fields, PEOPLE)
    assert "not rendered here" in render_block({"type": "video"}, PEOPLE), "nothing is dropped silently"


def test_consecutive_messages_of_one_author_are_grouped_as_in_slack():
    messages = [
        {"user": "U07MARIA1", "text": "<@U0OPSBOT> why 5xx?", "ts": "1700000000.000100"},
        {"bot_id": "B1", "text": "🔎 Investigating", "ts": "1700000001.000100"},
        {"bot_id": "B1", "text": "✓ Step 1", "ts": "1700000002.000100"},
    ]
    page = render_thread(messages, PEOPLE, reactions={"1700000000.000100": ["eyes", "white_check_mark"]})
    assert page.count('class="message"') == 2
    assert page.count('class="message grouped"') == 1
    assert '<span class="reaction">👀 <small>1</small></span>' in page
    assert "2 replies" in page


async def test_the_demo_thread_from_the_real_app_lays_out_in_chromium():
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: install the Debian package chromium (scripts/install-system-deps)")
    thread = await demo_thread()
    texts = [m["text"] for m in thread.messages]
    assert texts[0].endswith("order-service 5xx went from 0.1% to 12% in 3 minutes, find the root cause")
    assert texts[1].startswith("✅ Root cause found: Deploy v2.14.0"), "the summary, now the verdict, comes first"
    assert texts[-1].startswith("✅ *Root cause found* · confidence *confirmed* — "), "the last reply"
    assert thread.messages[-1]["subtype"] == "thread_broadcast", "sent to the channel too"
    assert "white_check_mark" in thread.reactions[thread.messages[0]["ts"]]
    page = render_thread(thread.messages, Directory(users=USERS), reactions=thread.reactions)
    assert page.count('class="button primary"') == 0, "the decided approval has no buttons left"
    assert "approved by" in page
    assert '<span class="mention">@Sam (SRE lead)</span>' in page
    shot = await thread_height(page, OUTPUT / "slack-thread.png")
    assert set(shot.message_heights) == {m["ts"] for m in thread.messages}
    assert all(height > 20 for height in shot.message_heights.values())
    assert shot.height_px >= sum(shot.message_heights.values())
    assert (OUTPUT / "slack-thread.png").stat().st_size > 50_000
