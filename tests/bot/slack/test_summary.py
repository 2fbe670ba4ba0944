"""The summary message: live (status, hypothesis, what was checked, what is next, Stop) and final (the verdict with
its gated confidence, evidence linked to steps and sources, ruled out, next steps, actions, 👍/👎, no Stop);
hostile text escaped in every field; Slack's limits kept whatever the sizes."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings

from bot.slack.action_ids import FEEDBACK, FEEDBACK_REASON, STOP
from bot.slack.blocks import no_step_urls
from bot.slack.feedback import feedback_block, feedback_click, reason_modal, submitted_reason
from bot.slack.summary import (
    AwaitingApproval,
    LiveRun,
    Restarting,
    Running,
    Thinking,
    final_reply,
    final_summary,
    live_summary,
)
from bot.verdict import step_line, verdict_of
from bot.words import RUN_STOPPED_REASON
from kernel import (
    ApprovalRecord,
    Confidence,
    ErrorKind,
    Evidence,
    Findings,
    Hypothesis,
    RuledOut,
    RunResult,
    SourceLink,
    Step,
    StopReason,
    ToolCall,
    Usage,
    check_evidence,
)
from samples.slack_messages import (
    HOSTILE,
    adversarial,
    assert_no_hostile_tokens,
    assert_within_limits,
    texts_of,
)

AT = datetime(2026, 11, 30, 20, 25, tzinfo=UTC)
GRAPH = SourceLink("graph", "https://prom.example/graph?g0.expr=a&g0.range_input=30m")
CHEAP = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def viewer(index: int) -> str:
    return f"https://ops.example/runs/r1#step-{index}"


def steps() -> list[Step]:
    return [
        Step(
            index=1,
            turn=0,
            call=ToolCall(name="query_metrics", args={"service": "checkout"}),
            observation="5xx",
            headline="5xx 0.2% → 31% at t-11m",
            links=(GRAPH,),
        ),
        Step(
            index=2,
            turn=1,
            call=ToolCall(name="rollback_deployment", args={"service": "checkout", "to_version": "v3.7.2"}),
            observation="webhook 200: rolled back",
            approval=ApprovalRecord(decision="approved", by="U0BOB42", at=AT),
        ),
        Step(index=3, turn=2, call=ToolCall(name="finish", args={})),
    ]


def finished(findings: Findings, trace: list[Step] | None = None) -> RunResult:
    trace = trace if trace is not None else steps()
    return RunResult(
        run_id="r1",
        task="checkout 5xx",
        stop_reason=StopReason.FINISH,
        answer=findings.markdown(),
        findings=findings,
        evidence_check=check_evidence(findings, trace),
        steps=trace,
        usage=Usage(steps=3, prompt_tokens=12_000, completion_tokens=700, elapsed_s=41.0),
    )


def live(**changes: object) -> LiveRun:
    fields: dict[str, object] = {
        "run_id": "r1",
        "task": "checkout 5xx after v3.8.0",
        "requested_by": "U0ALICE1",
        "steps": tuple(step_line(s) for s in steps()[:1]),
        "hypothesis": Hypothesis("v3.8.0 cut the payments timeout", Confidence.LIKELY),
        "activity": Running(("search_logs gateway 15m",)),
    }
    return LiveRun(**(fields | changes))  # type: ignore[arg-type]


def test_the_live_summary_says_what_is_going_on_and_has_a_stop_button():
    message = live_summary(live())
    assert texts_of(message) == [
        "🔎 *Investigating:* checkout 5xx after v3.8.0\n"
        "*Leading hypothesis:* v3.8.0 cut the payments timeout · _likely_\n"
        "*Checked:*\n"
        "✓ *1* `query_metrics checkout` — 5xx 0.2% → 31% at t-11m\n"
        "*Next:* ⏳ running `search_logs gateway 15m`",
        "Run `r1` · requested by <@U0ALICE1>",
    ]
    [stop] = message.blocks[-1]["elements"]
    assert (stop["action_id"], stop["value"], stop["confirm"]["style"]) == (STOP, "r1", "danger")
    assert_within_limits(message)


@pytest.mark.parametrize(
    ("activity", "said"),
    [
        (Thinking(), "🤔 deciding what to check next"),
        (
            AwaitingApproval(2, "rollback_deployment checkout", "<@U0BOB42>"),
            "🔐 step 2 (`rollback_deployment checkout`) waits for approval from <@U0BOB42>",
        ),
        (Restarting(3), "⏸ OpsAgent is restarting; this run is saved and continues after step 3"),
        (
            Running(("logs a", "logs b", "pods c", "events d")),
            "⏳ running 4 reads in parallel: `logs a` · `logs b` · `pods c` · 1 more",
        ),
    ],
)
def test_the_live_summary_says_what_is_next(activity, said):
    assert texts_of(live_summary(live(activity=activity)))[0].endswith(f"*Next:* {said}")


def test_a_long_run_lists_its_latest_steps_and_counts_the_earlier_ones():
    many = tuple(step_line(Step(index=i, turn=i, call=ToolCall(name="probe", args={"n": i}))) for i in range(1, 21))
    text = texts_of(live_summary(live(steps=many, hypothesis=None)))[0]
    assert "*Checked:* _(12 earlier steps in the thread)_" in text
    assert "`probe 13`" in text
    assert "`probe 12`" not in text


def test_a_new_content_gets_new_block_ids_and_the_same_content_keeps_them():
    first, again, later = live_summary(live()), live_summary(live()), live_summary(live(activity=Thinking()))
    assert [b["block_id"] for b in first.blocks] == [b["block_id"] for b in again.blocks]
    assert not {b["block_id"] for b in first.blocks} & {b["block_id"] for b in later.blocks}


def test_the_verdict_leads_with_the_cause_and_links_every_claim_to_its_steps_and_sources():
    findings = Findings(
        summary="v3.8.0 cut the payments timeout to 200 ms.",
        root_cause="`upstream_timeout` 2s → 200ms",
        confidence=Confidence.CONFIRMED,
        evidence=(Evidence(claim="5xx 0.2% → 31% at t-11m", steps=(1,)),),
        ruled_out=(RuledOut(hypothesis="the TLS certificate", steps=(1,)),),
        next_steps=("restore the timeout",),
    )
    message = final_summary(verdict_of(finished(findings)), step_url=viewer, trace_url="https://ops.example/runs/r1")
    assert texts_of(message) == [
        "✅ *Root cause found* · confidence *confirmed*\n"
        "*v3.8.0 cut the payments timeout to 200 ms.*\n"
        "*Root cause:* `upstream_timeout` 2s → 200ms",
        "*Evidence*\n• 5xx 0.2% → 31% at t-11m · step <https://ops.example/runs/r1#step-1|1> · "
        "<https://prom.example/graph?g0.expr=a&amp;g0.range_input=30m|graph>",
        "*Ruled out*\n• the TLS certificate · step <https://ops.example/runs/r1#step-1|1> · "
        "<https://prom.example/graph?g0.expr=a&amp;g0.range_input=30m|graph>",
        "*Next steps*\n• restore the timeout",
        "*Actions*\n✅ *2* `rollback_deployment checkout v3.7.2` · done, approved by <@U0BOB42> at "
        "<!date^1796070300^{time}|20:25 UTC>: webhook 200: rolled back · <https://ops.example/runs/r1#step-2|step>",
        "2 steps · 12.7k tokens · 41.0 s · run `r1` · <https://ops.example/runs/r1|View trace>",
    ]
    assert STOP not in json.dumps(message.blocks), "no live Stop button once it ended"
    assert message.blocks[-2] == feedback_block("r1") | {"block_id": message.blocks[-2]["block_id"]}
    assert message.text == "✅ Root cause found: v3.8.0 cut the payments timeout to 200 ms."
    assert_within_limits(message)


def test_the_gate_is_shown_a_lowered_confidence_why_an_unsupported_claim_and_an_action_claimed_not_taken():
    findings = Findings(
        summary="We restarted the gateway.",
        confidence=Confidence.CONFIRMED,
        evidence=(Evidence(claim="5xx rose", steps=(1,)), Evidence(claim="504s", steps=(9,))),
    )
    text = "\n".join(texts_of(final_summary(verdict_of(finished(findings)), step_url=no_step_urls)))
    assert (
        "🟡 *Likely cause* · confidence *lowered from confirmed to likely: 1 of 2 evidence claims is unsupported*"
        in text
    )
    assert "• ⚠️ _unsupported (step 9 does not exist):_ 504s · step 9" in text
    assert "⚠️ *Claimed, not done:* “We restarted the gateway.” No approved step took this action." in text


def test_a_stopped_run_says_so_first_with_who_stopped_it_and_what_it_knew():
    first = replace(steps()[0], hypothesis=Hypothesis("v3.8.0 broke checkout", Confidence.LIKELY))
    stopped = RunResult(
        run_id="r1",
        task="t",
        stop_reason=StopReason.CANCELLED,
        detail="stopped by U0ALICE1",
        partial_answer="Probably **v3.8.0**.",
        steps=[first],
    )
    message = final_summary(verdict_of(stopped, stopped_by="U0ALICE1"), step_url=no_step_urls)
    assert "\n".join(texts_of(message)).startswith(
        "⏹ *Stopped by <@U0ALICE1>*\n"
        "*Leading hypothesis:* v3.8.0 broke checkout · _likely_\n"
        "*Checked:*\n"
        "✓ *1* `query_metrics checkout` — 5xx 0.2% → 31% at t-11m\n"
        "⚠️ *Not a final answer.* What the agent knew when it stopped:\nProbably *v3.8.0*."
    )
    assert FEEDBACK not in json.dumps(message.blocks), "no 👍/👎 for an answer the run did not give"
    budget = stopped.model_copy(update={"stop_reason": StopReason.MAX_STEPS, "detail": "20 of 20 <b>"})
    assert texts_of(final_summary(verdict_of(budget), step_url=no_step_urls))[0].startswith(
        "❌ *Stopped: the step budget ran out — 20 of 20 &lt;b&gt;*"
    )
    assert final_reply(verdict_of(stopped, stopped_by="U0ALICE1")) == (
        "⏹ *Stopped by <@U0ALICE1>* after 1 step · checked `query_metrics checkout` · leading hypothesis: v3.8.0 "
        "broke checkout (_likely_) · what each step found is at the top of this thread."
    )
    assert final_reply(verdict_of(budget.model_copy(update={"steps": []}))) == (
        "❌ *Stopped: the step budget ran out* before any step · no hypothesis yet · what each step found is at the "
        "top of this thread."
    )


def test_a_stop_names_the_approvals_it_voided_and_only_when_there_were_some():
    rollback = replace(
        steps()[1],
        error=ErrorKind.DENIED,
        approval=ApprovalRecord(decision="denied", by="U0ALICE1", at=AT, reason=RUN_STOPPED_REASON),
    )
    voided = RunResult(run_id="r1", task="t", stop_reason=StopReason.CANCELLED, steps=[steps()[0], rollback])
    reply = final_reply(verdict_of(voided, stopped_by="U0ALICE1"))
    assert "· checked `query_metrics checkout` ·" in reply, "a side effect that did not run checked nothing"
    assert "· 1 pending approval voided: step 2 `rollback_deployment checkout v3.7.2` ·" in reply
    denied = replace(rollback, approval=ApprovalRecord(decision="denied", by="U0ALICE1", at=AT, reason="not now"))
    by_a_person = voided.model_copy(update={"steps": [steps()[0], denied]})
    assert "voided" not in final_reply(verdict_of(by_a_person, stopped_by="U0ALICE1")), "denied before the Stop"
    assert "voided" not in final_reply(verdict_of(voided.model_copy(update={"steps": steps()[:1]}), stopped_by="U1"))


def test_the_last_reply_is_one_line_with_the_verdict():
    findings = Findings(
        summary="x",
        root_cause="`v3.8.0` shrank the pool",
        confidence=Confidence.LIKELY,
        evidence=(Evidence(claim="a", steps=(1,)),),
    )
    assert final_reply(verdict_of(finished(findings))) == (
        "🟡 *Likely cause* · confidence *likely* — `v3.8.0` shrank the pool · the verdict is at the top of this thread."
    )
    link = "https://acme.slack.com/archives/C1/p1700000000000100"
    assert final_reply(verdict_of(finished(findings)), thread_url=link) == (
        f"🟡 *Likely cause* · confidence *likely* — `v3.8.0` shrank the pool · <{link}|Open the thread>"
    ), "sent to the channel too: it links the thread"


def test_hostile_model_and_tool_text_is_escaped_in_every_field_of_the_summary():
    hostile_step = Step(
        index=1,
        turn=0,
        call=ToolCall(name="q", args={"x": HOSTILE}),
        observation=HOSTILE,
        headline=HOSTILE,
        links=(SourceLink(HOSTILE, "https://x.example/<!channel>"),),
    )
    findings = Findings(
        summary=HOSTILE,
        root_cause=HOSTILE,
        confidence=Confidence.LIKELY,
        evidence=(Evidence(claim=HOSTILE, steps=(1,)), Evidence(claim=HOSTILE, steps=(7,))),
        ruled_out=(RuledOut(hypothesis=HOSTILE, steps=(1,)),),
        next_steps=(HOSTILE,),
    )
    verdict = verdict_of(finished(findings, [hostile_step]))
    prose = verdict_of(finished(findings, [hostile_step]).model_copy(update={"answer": HOSTILE}))
    running = live(task=HOSTILE, steps=(step_line(hostile_step),), hypothesis=Hypothesis(HOSTILE))
    messages = [
        final_summary(verdict, step_url=viewer, trace_url="https://ops.example/runs/r1"),
        final_summary(prose, step_url=viewer),
        live_summary(running),
        live_summary(live(activity=Running((HOSTILE,)))),
    ]
    for message in messages:
        assert_within_limits(message)
        assert_no_hostile_tokens(message)


def test_feedback_buttons_name_the_run_and_the_modal_asks_why():
    block = feedback_block("r1")
    [buttons] = block["elements"]
    assert (buttons["type"], buttons["action_id"]) == ("feedback_buttons", FEEDBACK)
    clicks = [feedback_click(b["value"]) for b in (buttons["positive_button"], buttons["negative_button"])]
    assert [(c.run_id, c.thumb) for c in clicks if c] == [("r1", "up"), ("r1", "down")]
    assert feedback_click("sideways:r1") is None
    assert feedback_click("up:") is None
    modal = reason_modal("r1")
    assert (modal["callback_id"], modal["private_metadata"], len(modal["title"]["text"]) <= 24) == (
        FEEDBACK_REASON,
        "r1",
        True,
    )
    view = {"private_metadata": "r1", "state": {"values": {"reason": {"reason_text": {"value": "wrong service"}}}}}
    assert submitted_reason(view) == ("r1", "wrong service")
    assert submitted_reason({"private_metadata": "r1", "state": {"values": {}}}) == ("r1", "")


@CHEAP
@given(text=adversarial, detail=adversarial, partial=adversarial)
def test_summaries_stay_within_limits(text: str, detail: str, partial: str) -> None:
    trace = [
        Step(index=i, turn=i, call=ToolCall(name="q", args={"x": text}), observation=text, headline=text, thought=text)
        for i in range(1, 30)
    ]
    many = tuple(Evidence(claim=text.strip() or "x", steps=(i,)) for i in range(1, 30))
    findings = Findings(
        summary=text,
        root_cause=text,
        evidence=many,
        ruled_out=(RuledOut(hypothesis=text.strip() or "x"),),
        next_steps=(text,) * 9,
    )
    assert_within_limits(final_summary(verdict_of(finished(findings, trace)), step_url=viewer))
    failed = RunResult(
        run_id=detail[:50] or "r",
        task=text,
        stop_reason=StopReason.LOOP_DETECTED,
        detail=detail,
        partial_answer=partial,
    )
    assert_within_limits(final_summary(verdict_of(failed, stopped_by=detail), step_url=no_step_urls))
    cancelled = failed.model_copy(update={"stop_reason": StopReason.CANCELLED})
    assert_within_limits(final_summary(verdict_of(cancelled, stopped_by=detail), step_url=no_step_urls))
    assert_within_limits(
        live_summary(live(task=text, steps=tuple(step_line(s) for s in trace), hypothesis=Hypothesis(text or "h")))
    )


@pytest.mark.parametrize(
    "text",
    [
        "&" * 300_000,
        "😀" * 100_000,
        "```\n" + ("<!channel> " * 400 + "\n") * 100,
        "**x " * 50_000 + "\n" + "`" * 10_000,
    ],
    ids=["ampersands", "astral", "fenced-pings", "no-closers"],
)
def test_extreme_sizes_stay_within_limits(text: str) -> None:
    findings = Findings(summary=text, root_cause=text, evidence=(Evidence(claim=text, steps=(1,)),), next_steps=(text,))
    trace = [Step(index=1, turn=0, call=ToolCall(name="t", args={"q": text}), observation=text, thought=text)]
    assert_within_limits(final_summary(verdict_of(finished(findings, trace)), step_url=viewer))
    prose = finished(findings, trace).model_copy(update={"answer": text})
    assert_within_limits(final_summary(verdict_of(prose), step_url=viewer))
