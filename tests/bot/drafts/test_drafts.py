"""“@opsagent postmortem” and “@opsagent status” in an investigation's thread, end to end in the fake Slack: the
postmortem's timeline is the run's recorded events and the thread's messages, exactly; the model writes only the
narrative, marked as a draft, and without a model (or when it fails) the facts-only draft still comes, saying so.
Whatever the model writes, the draft renders as prose: no HTML, no image, no link whose text is not where it goes."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from bot.slack.action_ids import APPROVE
from kernel import LLMError, LLMErrorKind, ScriptedModel
from samples.markdown_pages import RENDERERS, Rendered
from testkit.fakes.slack_workspace import TEAM_DOMAIN
from testkit.slack_bot import ALICE, BOB, CHANNEL, ROLLBACK, text_turn

VERDICT = text_turn(
    "finish",
    summary="Checkout failed after the v2.14.0 deploy.",
    root_cause="v2.14.0 dropped the payments timeout.",
    confidence="confirmed",
    evidence=[{"claim": "5xx jumped at t-10m", "steps": [1]}],
    next_steps=["add a timeout test"],
)
NARRATIVE = json.dumps(
    {
        "summary": "Checkout failed for ten minutes after a deploy.",
        "impact": "Shoppers could not pay.",
        "root_cause": "The deploy dropped a timeout.",
        "trigger": "The v2.14.0 deploy.",
        "detection": "Bob asked OpsAgent.",
        "resolution": "A rollback, approved by Alice.",
        "follow_ups": ["Test the timeout", "Alert on 5xx sooner"],
    }
)
HOSTILE = "<!channel> ## Root cause: it was Bob | [click](https://evil.example) password=hunter2hunter2"
HOSTILE_NARRATIVE = json.dumps(
    {
        "summary": "Checkout failed for **ten minutes** after `v2.14.0`. ![pixel](http://evil.example/p.png) "
        "<img src=x onerror=alert(1)>",
        "impact": "- web shoppers\n- *mobile* shoppers\n\nSee [http://good.example](http://evil.example/phish) and "
        "[the dashboard](https://grafana.example/d/1).",
        "root_cause": "![logo][1]\n\n[1]: http://evil.example/ref.png\n\n[click](javascript:alert(1)) <!-- hidden -->"
        " <script>alert(1)</script>",
        "trigger": "# Root cause: it was Bob\n> quoted\n~~~",
        "detection": "<javascript:alert(2)> [x](data:text/html,hi) \x1b[31mred",
        "resolution": "A rollback. <iframe src=//evil.example></iframe>",
        "follow_ups": ["Test the timeout", "<b>Alert</b> on 5xx sooner"],
    }
)
SECTIONS = ["Summary", "Impact window", "Timeline", "Root cause", "Trigger", "Detection", "Resolution"]
SECTIONS += ["What went well", "What went badly", "Follow-ups", "Sources"]
MODEL_CELLS = re.compile(r"^\| (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \| (.*?) \| (.*) \|$")


def drafter(replies: list) -> ScriptedModel:
    return ScriptedModel(replies, model="drafter-1")


STATUS = json.dumps(
    {"affected": "Checkout.", "known": "A deploy <!channel>.", "doing": "Rolled back.", "next_update": "In 30 minutes."}
)


@pytest.fixture
def model():
    return drafter([NARRATIVE])


@pytest.fixture
def app_options(model):
    return {"drafter": model}


async def investigated(harness, script) -> str:
    """An investigation with an approved rollback and people talking in its thread; its thread ts."""
    script.append([text_turn("query_metrics", "Why: the 5xx.", service="checkout"), ROLLBACK, VERDICT])
    ts = await harness.mention("checkout 5xx at 12%, find the root cause")
    message, approval_id = await harness.until(lambda: harness.approval_message(ts), "an approval message")
    harness.slack.add_message(CHANNEL, "customers are complaining", user=ALICE, thread_ts=ts)
    assert await harness.click(APPROVE, approval_id, message.ts, ts) == 200
    await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the run ends")
    harness.slack.add_message(CHANNEL, HOSTILE, user=BOB, thread_ts=ts)
    return ts


def posted_file(harness, ts: str, prefix: str):
    return next((f for f in harness.slack.files.values() if f.thread_ts == ts and f.filename.startswith(prefix)), None)


async def test_the_postmortem_timeline_is_the_recorded_events_and_messages_exactly(harness, script, run_store, model):
    ts = await investigated(harness, script)
    await harness.mention("postmortem", thread_ts=ts, user=ALICE)
    upload = await harness.until(lambda: posted_file(harness, ts, "postmortem-draft-"), "the draft is uploaded")
    record = await run_store.runs.run_in_thread(CHANNEL, ts)
    audit = await run_store.audit.audit_log(run_id=record.run_id)
    markdown = upload.text
    assert upload.filename == f"postmortem-draft-{record.run_id}.md"
    rows = [m.groups() for line in markdown.splitlines() if (m := MODEL_CELLS.match(line))]
    people = [m for m in harness.thread(ts) if m.user in (ALICE, BOB)]  # the mentions too: people wrote them
    expected = sorted(
        [(e.at, 0, e.kind) for e in audit] + [(datetime.fromtimestamp(float(m.ts), UTC), 1, "message") for m in people],
        key=lambda x: x[:2],
    )
    assert [row[0] for row in rows] == [at.strftime("%Y-%m-%d %H:%M:%S") for at, _, _ in expected]
    kinds = [kind for _, _, kind in expected]
    steps = [row[2] for row, kind in zip(rows, kinds, strict=True) if kind == "tool_call"]
    assert len(steps) == 4, "step 2 twice: asked for approval, then run"
    assert steps[0].startswith('step 1: query\\_metrics\\(service="checkout"\\) → checkout 5xx jumped')
    assert steps[1].startswith("step 2: rollback\\_deployment\\(")
    assert steps[1].endswith("→ waiting for a person's approval")
    assert steps[2].endswith("→ rolled back order-service to v2.13.2")
    decided = next(row for row, kind in zip(rows, kinds, strict=True) if kind == "approval_decided")
    assert decided[1] == "alice", "people by the name Slack gave when they acted (kept in the audit log), not ids"
    assert decided[2].startswith("approved step 2 rollback\\_deployment")
    messages = [row for row, kind in zip(rows, kinds, strict=True) if kind == "message"]
    assert [row[1] for row in messages] == ["bob", "alice", "bob", "alice"]
    assert [row[2] for row in messages[:2]] == [
        "&lt;@U0OPSBOT&gt; checkout 5xx at 12%, find the root cause",
        "customers are complaining",
    ]
    # Hostile text is one inert table cell: no heading, link or extra cell, its secret redacted; its URL linked
    # as itself.
    assert "hunter2hunter2" not in markdown
    assert "\\#\\# Root cause: it was Bob \\| \\[click\\]\\(<https://evil.example>\\)" in messages[2][2]
    assert not any(line.startswith("## Root cause: it was Bob") for line in markdown.splitlines())
    # The narrative is the model's, marked; the facts are code's.
    assert "_✎ Drafted by drafter-1: check it._\n\nThe deploy dropped a timeout." in markdown
    assert "**Recorded verdict:** v2.14.0 dropped the payments timeout." in markdown
    assert "Confidence**, as the evidence gate checked it: confirmed" in markdown
    assert "approved by alice at " in markdown
    assert "## What went well\n\n_For people to write._" in markdown
    assert "- add a timeout test" in markdown
    assert f"- Thread: https://{TEAM_DOMAIN}.slack.com/archives/{CHANNEL}/p{ts.replace('.', '')}" in markdown
    asked = model.requests[0].messages[0].content
    nonce = re.findall(r"<data-([0-9a-f]+)>", asked)[-1]
    assert asked.index(f"<data-{nonce}>") < asked.index("customers are complaining") < asked.index(f"</data-{nonce}>")
    assert model.requests[0].tools == []
    assert "sections marked ✎ were drafted by drafter-1" in upload.initial_comment


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        (None, "no model is configured"),
        (drafter([LLMError(LLMErrorKind.SERVER_ERROR, "down")]), "the model drafter-1 failed (server_error)"),
        (drafter(["I would rather not."]), "the model drafter-1 did not answer with the sections asked"),
    ],
)
async def test_without_a_narrative_the_facts_only_draft_still_comes_and_says_why(harness, script, problem):
    ts = await investigated(harness, script)
    await harness.mention("Postmortem.", thread_ts=ts, user=ALICE)
    upload = await harness.until(lambda: posted_file(harness, ts, "postmortem-draft-"), "the draft is uploaded")
    assert f"No narrative was drafted ({problem})" in Rendered(upload.text).text
    assert "✎ Drafted" not in upload.text
    assert "## Trigger\n\n_For people to write._" in upload.text
    assert "| Time (UTC) | Who | What |" in upload.text
    assert f"only the recorded facts (no narrative: {problem})" in upload.initial_comment


@pytest.mark.parametrize("model", [ScriptedModel([HOSTILE_NARRATIVE], model="drafter_<!here>")])
async def test_a_hostile_narrative_renders_as_prose_in_every_renderer(harness, script):
    ts = await investigated(harness, script)
    await harness.mention("postmortem", thread_ts=ts, user=ALICE)
    upload = await harness.until(lambda: posted_file(harness, ts, "postmortem-draft-"), "the draft is uploaded")
    for renderer in RENDERERS:
        page = Rendered(upload.text, renderer)
        assert not {"img", "script", "iframe", "b"} & set(page.tags), (renderer, page.html)
        assert "<!--" not in page.html
        assert page.dishonest_links() == [], renderer
        assert re.findall(r"<h2>(.*?)</h2>", page.html) == SECTIONS, renderer
        assert page.tags.count("h1") == 1
        assert page.tags.count("blockquote") == 1, "the banner only"
        assert not any(href.startswith("http://good.example") for href, _ in page.links)
    page = Rendered(upload.text)
    # Written as prose, shown as written where it is not.
    assert "Checkout failed for ten minutes after v2.14.0. ![pixel](http://evil.example/p.png) <img src=x" in page.text
    assert "<strong>ten minutes</strong> after <code>v2.14.0</code>" in page.html
    assert "<li>web shoppers</li>\n<li><em>mobile</em> shoppers</li>" in page.html
    assert "See http://evil.example/phish and the dashboard (https://grafana.example/d/1)." in page.text
    assert "![logo][1]" in page.text
    assert "[click](javascript:alert(1)) <!-- hidden --> <script>alert(1)</script>" in page.text
    assert "# Root cause: it was Bob\n> quoted\n~~~" in page.text
    assert "<javascript:alert(2)> [x](data:text/html,hi) \\x1b[31mred" in page.text
    assert "\x1b" not in upload.text, "a terminal printing the draft is not driven by it"
    assert "<b>Alert</b> on 5xx sooner" in page.text
    assert "✎ Drafted by drafter_<!here>: check it." in page.text, "the model's name, as configured, shown as text"
    assert "drafted by drafter_&lt;!here&gt;" in upload.initial_comment
    links = {href for href, _ in page.links}
    assert {"http://evil.example/phish", "https://grafana.example/d/1", "http://evil.example/ref.png"} <= links


HOSTILE_STATUS = json.dumps(
    {
        "affected": "<http://evil.example|http://good.example> and [http://good.example](http://evil.example)",
        "known": "<!channel> <@U0EVIL99> <!date^1700000000^{date}|now> ![pixel](http://evil.example/p.png)",
        "doing": "```\n<b>rolled back</b>\n``` *done*",
        "next_update": "<!here> in 30 minutes",
    }
)


@pytest.mark.parametrize("model", [drafter([HOSTILE_STATUS])])
async def test_a_hostile_narrative_in_a_status_update_is_shown_as_written(harness, script):
    ts = await investigated(harness, script)
    await harness.mention("status", thread_ts=ts, user=ALICE)
    update = await harness.until(
        lambda: next((m for m in harness.thread(ts) if "Status update" in m.text), None), "the status update"
    )
    blocks = json.dumps(update.blocks, ensure_ascii=False)
    assert "<" not in blocks + update.text, "no mention, link or date that Slack would act on"
    assert "*Affected:* &lt;http://evil.example|http://good.example&gt; and [http://good.example]" in blocks
    assert "*What is being done:* ˋˋˋ &lt;b&gt;rolled back&lt;/b&gt; ˋˋˋ *done*" in blocks, "no code block opens"
    assert "Drafted by drafter-1 from the recorded facts" in blocks


@pytest.mark.parametrize("model", [drafter([STATUS])])
async def test_status_posts_a_plain_update_to_copy_escaped(harness, script):
    ts = await investigated(harness, script)
    await harness.mention("status", thread_ts=ts, user=ALICE)
    update = await harness.until(
        lambda: next((m for m in harness.thread(ts) if "Status update" in m.text), None), "the status update"
    )
    text = json.dumps(update.blocks)
    assert "*What we know:* A deploy &lt;!channel&gt;." in text
    assert "*Next update:* In 30 minutes." in text
    assert "A draft for you to check and send yourself. Drafted by drafter-1 from the recorded facts." in text
    assert "<!channel>" not in text


@pytest.mark.parametrize("model", [None])
async def test_status_without_a_model_says_the_facts(harness, script):
    ts = await investigated(harness, script)
    await harness.mention("status update", thread_ts=ts, user=ALICE)
    update = await harness.until(
        lambda: next((m for m in harness.thread(ts) if "Status update" in m.text), None), "the status update"
    )
    text = json.dumps(update.blocks, ensure_ascii=False)
    assert (
        "*What we know:* Checkout failed after the v2.14.0 deploy. v2.14.0 dropped the payments timeout. (confidence: confirmed)"
        in text
    )
    assert "The investigation has ended; actions taken: rollback_deployment (done)." in text
    assert "*Affected:* checkout (the symptom is not measured yet)." in text, "not the request's words"
    assert "From the recorded facts only (no model: no model is configured)" in text


async def test_a_draft_asked_where_no_investigation_ran_says_where_to_ask(harness):
    ts = await harness.mention("postmortem")
    await harness.until(
        lambda: any("no investigation in this thread" in m.text for m in harness.thread(ts)), "the answer"
    )
    assert harness.models == [], "no run was started"
