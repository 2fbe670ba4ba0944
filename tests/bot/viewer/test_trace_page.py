"""The trace page from real runs: every step in full, approvals, usage, failures plainly marked, and
hostile or secret text in a trace rendered harmless."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

from bot.verdict import tool_steps
from bot.viewer.page import LOCAL_TIMES, notice_page, run_page
from kernel import (
    Confidence,
    ErrorKind,
    Findings,
    Guidance,
    StopReason,
    TakenGuidance,
    check_evidence,
    findings_from_prose,
    load_trace,
)
from samples.trace_runs import HOSTILE, TASK, failed_run, incident_run

TRACES = Path(__file__).resolve().parents[2] / "fixtures" / "traces"


class Elements(HTMLParser):
    """The page's tags, the text inside each `<li class="step">` and each script's source, as a browser's parser
    sees them."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.steps: list[str] = []
        self.scripts: list[str] = []
        self._depth = 0
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "script":
            self.scripts.append("")
        if tag == "li" and "step" in (dict(attrs).get("class") or "").split():
            self.steps.append("")
            self._depth = 1
        elif tag == "li" and self._depth:
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "li" and self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self.tags[-1:] == ["script"] and self.scripts:
            self.scripts[-1] += data
        if self._depth:
            self.steps[-1] += data


async def test_the_page_shows_every_step_in_full(tools):
    result = await incident_run(tools)
    page = Elements(run_page(result))
    assert [s.index for s in result.steps] == [1, 2, 3, 4, 5, 6]
    assert len(page.steps) == 6
    assert "query_metrics" in page.steps[0]
    assert "jumped from 0.10% to 12.0%" in page.steps[0]
    huge = result.steps[1]
    assert len(result.full_output(huge)) > len(huge.observation), "the log search must have been truncated"
    assert "upstream connect error #1500" not in huge.observation
    assert "upstream connect error #1500" in page.steps[1]
    assert "the model was shown a truncated version" in page.steps[1]
    assert result.steps[2].error is ErrorKind.EXCEPTION
    assert "error: exception" in page.steps[2]
    assert "LogQL parse error" in page.steps[2]
    assert '"to_version": "v2.13.2"' in page.steps[4]
    assert "Approval approved by U0ALICE at 20" in page.steps[4]
    assert "Root cause" in page.steps[5]


async def test_the_header_approvals_and_usage_are_shown(tools):
    result = await incident_run(tools)
    page = run_page(result)
    assert TASK in page
    assert result.run_id in page
    assert "scripted" in page
    assert "Finished with an answer" in page
    assert "NOT an answer" not in page
    approvals = re.search(r'<table id="approvals">(.*?)</table>', page, re.S)
    assert approvals is not None
    assert "rollback_deployment" in approvals[1]
    assert "approved" in approvals[1]
    assert "U0ALICE" in approvals[1]
    usage = re.search(r'<table id="usage">(.*?)</table>', page, re.S)
    assert usage is not None
    assert f"<th>Steps</th><td>{tool_steps(result.steps)}</td>" in usage[1], "the step count every surface shows"
    assert (tool_steps(result.steps), result.usage.steps) == (5, 6), "the finish spends a step of the budget"
    assert '<h2>Steps <span class="meta">(5 · 1 more not counted)</span></h2>' in page
    assert f"{result.usage.prompt_tokens:,}" in usage[1]
    assert "<th>Cost</th><td>no price (add the model to [llm.prices])</td>" in usage[1], "not $0.0000"
    priced = re.search(r'<table id="usage">(.*?)</table>', run_page(result, priced=True), re.S)
    assert priced is not None
    assert "<th>Cost</th><td>$0.0000</td>" in priced[1], "a model priced at nothing costs $0"


async def test_people_are_shown_by_the_names_they_had_when_they_acted(tools):
    result = await incident_run(tools)
    page = run_page(result, names={"U0ALICE": "Alice <Ops>"})
    approvals = re.search(r'<table id="approvals">(.*?)</table>', page, re.S)
    assert approvals is not None
    assert "<td>Alice &lt;Ops&gt;</td>" in approvals[1], "a name is outside text: escaped"
    assert "U0ALICE" not in approvals[1]
    assert "Approval approved by Alice &lt;Ops&gt; at <time" in page
    assert "done, approved by Alice &lt;Ops&gt; at <time" in page, "in the verdict's actions too"
    stopped = result.model_copy(update={"stop_reason": StopReason.CANCELLED, "detail": "stopped by U0BOB"})
    shown = run_page(stopped, names={"U0BOB": "bob"}, stopped_by="U0BOB")
    assert '<p class="label">Stopped by bob <code>(cancelled)</code></p>' in shown
    assert "U0BOB" not in shown
    assert "Stopped by U0CAROL" in run_page(stopped, stopped_by="U0CAROL"), "no name kept: the id, not nobody"


async def test_times_are_utc_for_a_script_to_show_in_the_readers_zone(tools):
    result = await incident_run(tools)
    page = run_page(result.model_copy(update={"started_at": datetime(2026, 11, 30, 20, 25, 3, tzinfo=UTC)}))
    started = '<time datetime="2026-11-30T20:25:03Z" title="2026-11-30 20:25:03 UTC">2026-11-30 20:25:03 UTC</time>'
    assert f"· started {started}</p>" in page
    assert Elements(page).scripts == [LOCAL_TIMES], "one script, ours"


async def test_a_failure_stop_is_plain_and_its_partial_answer_is_not_an_answer(tools):
    result = await failed_run(tools)
    assert result.stop_reason is StopReason.MAX_STEPS
    assert result.partial_answer
    page = run_page(result.model_copy(update={"detail": "2 of 2 steps used <b>"}))
    assert "Stopped: the step budget ran out" in page
    assert "(max_steps)" in page
    assert "2 of 2 steps used &lt;b&gt;" in page
    partial = re.search(r'<div class="box partial" id="partial-answer">(.*?)</div>', page, re.S)
    assert partial is not None
    assert "NOT an answer" in partial[1]
    assert "the cause is unchecked" in partial[1]
    assert "Finished with an answer" not in page


async def test_hostile_text_in_a_trace_renders_as_text(tools):
    result = await incident_run(tools)
    page = run_page(result)
    elements = Elements(page)
    assert elements.scripts == [LOCAL_TIMES], "no script but ours"
    assert "img" not in elements.tags
    assert HOSTILE not in page
    escaped = "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;"
    assert page.count(escaped) >= 3, "the thought, the arguments and the observation each carry it, escaped"


async def test_a_secret_that_slipped_past_the_kernel_is_redacted_on_the_page(tools):
    result = await incident_run(tools)
    leaked = result.model_copy(deep=True)
    leaked.steps[0].observation += " password=hunter2hunter2"
    leaked.outputs["o2"] += "\nAuthorization: Bearer abcdefghijklmnopqrstuvwx0123"
    leaked.answer = "token xoxb-1234567890-abcdefghij"
    page = run_page(leaked)
    for secret in ("hunter2hunter2", "abcdefghijklmnopqrstuvwx0123", "xoxb-1234567890"):
        assert secret not in page
    assert page.count("[REDACTED:") >= 2


def test_a_notice_page_escapes_its_text():
    page = notice_page("Run not found", f"The bot does not know run {HOSTILE}.\n\nSecond paragraph.")
    assert "script" not in Elements(page).tags
    assert "<p>Second paragraph.</p>" in page


async def test_the_verdicts_code_spans_show_as_code_and_stay_escaped(tools):
    result = await incident_run(tools)
    findings = Findings(
        summary="`pool.max_size` went from 50 to 10",
        root_cause=f"`{HOSTILE}` in `config/database.yaml`",
        confidence=Confidence.LIKELY,
        next_steps=("restore `max_size: 50`",),
    )
    page = run_page(result.model_copy(update={"findings": findings, "answer": findings.markdown()}))
    assert "<b><code>pool.max_size</code> went from 50 to 10</b>" in page
    assert "<li>restore <code>max_size: 50</code></li>" in page
    assert f"<code>{html.escape(HOSTILE)}</code>" in page, "escaped first, then shown as code"
    assert Elements(page).scripts == [LOCAL_TIMES]


async def test_a_prose_answer_shows_its_summary_its_evidence_linked_to_its_step_and_the_rest_as_paragraphs(tools):
    result = await incident_run(tools)
    answer = (
        "order-service 5xx jumped to 12% at t-10m. It has stayed at 12.0% since.\n\n"
        f"Nothing else I checked points elsewhere.\nIf you want, look at {HOSTILE}.\n\n```\nkubectl get pods\n```"
    )
    findings = findings_from_prose(answer)
    check = check_evidence(findings, result.steps, answer)
    page = run_page(result.model_copy(update={"answer": answer, "findings": findings, "evidence_check": check}))
    outcome = page.split('id="outcome">', 1)[1].split("</section>", 1)[0]
    assert (
        "confidence <b>likely (derived)</b> · <i>2 of 3 claims grounded in the steps, the root cause among" in outcome
    )
    assert '<p class="summary"><b>order-service 5xx jumped to 12% at t-10m.</b></p>' in outcome
    evidence = outcome.split('<ul class="evidence">', 1)[1].split("</ul>", 1)[0]
    assert evidence.startswith('<li>It has stayed at 12.0% since. found in <a href="#step-1">step 1</a>')
    rest = outcome.split('<div class="rest">', 1)[1].split("</div>", 1)[0]
    assert rest == (
        f"<p>Nothing else I checked points elsewhere.<br>If you want, look at {html.escape(HOSTILE)}.</p>"
        "<pre>kubectl get pods</pre>"
    ), "a paragraph (its line break kept), then the code block, escaped"
    assert "<script>" not in outcome
    assert "<pre>" + html.escape(answer, quote=False) not in page, "not the answer as one block"


def test_the_guidance_a_run_took_is_shown_with_its_giver_and_step_and_escaped():
    trace = load_trace(TRACES / "v3_guidance_and_verification.json")
    [taken] = trace.guidance
    said = TakenGuidance(Guidance("Maria (on-call)", HOSTILE, taken.guidance.at), taken.turn, taken.step)
    page = run_page(trace.model_copy(update={"guidance": [said]}))
    section = page.split('<ul id="guidance">', 1)[1].split("</ul>", 1)[0]
    assert "<b>Maria (on-call)</b>" in section
    assert 'taken before <a href="#step-2">step 2</a>' in section
    assert "<script>" not in section.split(": ", 1)[1], "their words are escaped"
    assert html.escape(HOSTILE)[:40] in section
    assert '<ul id="guidance">' not in run_page(load_trace(TRACES / "v2_native_prose_reminder_findings.json"))
