"""One denied rollback, every surface: Slack's summary, the terminal, the trace viewer, the API and the postmortem
and status drafts each list it as denied, by whom and why, with the person's reason escaped, and each says a person
may do it by hand; a run under the `read_only` policy says the policy refused it, never the model's hint."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from bot.api.views import Links, investigation, verdict_shape, verdict_text
from bot.cli.terminal import Terminal
from bot.drafts.facts import trace_facts
from bot.drafts.postmortem import draft_postmortem
from bot.drafts.status import draft_status
from bot.slack.blocks import no_step_urls
from bot.slack.summary import final_summary
from bot.store.records import RunRecord, RunStatus
from bot.verdict import verdict_of
from bot.verdict_actions import ActionState
from bot.viewer.page import run_page
from kernel import ApprovalRequest, Denied, RunFinished, RunResult, SideEffectMode
from samples.slack_messages import texts_of
from samples.trace_runs import rollback_run

AT = datetime(2026, 11, 30, 19, 16, tzinfo=UTC)
REASON = "not during <b>peak</b> traffic"
BY_HAND = "rollback_deployment order-service v2.13.2` by hand, if you agree (step 2 was denied)"


async def denied_run(tools) -> RunResult:
    async def deny(request: ApprovalRequest) -> Denied:
        return Denied(by="U0BOB42", reason=REASON, at=AT)

    return await rollback_run(tools, SideEffectMode.FULL, deny)


def on_the_terminal(result: RunResult) -> str:
    shown = io.StringIO()
    Terminal(Console(file=shown, width=300, color_system=None)).show(RunFinished(result))
    return shown.getvalue()


async def test_a_denied_rollback_is_said_on_every_surface_with_who_why_and_the_step_by_hand(tools):
    result = await denied_run(tools)
    slack = "\n".join(texts_of(final_summary(verdict_of(result), step_url=no_step_urls)))
    assert "🚫 *2* `rollback_deployment order-service v2.13.2` · denied by <@U0BOB42> at <!date^" in slack
    assert "not during &lt;b&gt;peak&lt;/b&gt; traffic" in slack
    assert f"• `{BY_HAND}" in slack

    terminal = on_the_terminal(result)
    assert "action: step 2 rollback_deployment order-service v2.13.2 · denied by U0BOB42 at 19:16 UTC: " in terminal
    assert f"next: {BY_HAND.replace('`', '')}" in terminal

    page = run_page(result)
    assert '<li class="action denied"><a href="#step-2">step 2</a>' in page
    assert "denied by U0BOB42 at <time" in page
    assert "not during &lt;b&gt;peak&lt;/b&gt; traffic" in page
    assert REASON not in page
    assert "<code>rollback_deployment order-service v2.13.2</code> by hand, if you agree" in page

    [action] = verdict_shape(verdict_of(result)).actions
    assert (action.state, action.approved_by, action.ok) == (ActionState.DENIED, "", False)
    assert action.said == f"denied by U0BOB42 at 19:16 UTC: {REASON}", "data for a client: it escapes for its page"
    assert verdict_shape(verdict_of(result)).next_steps[-1] == BY_HAND.replace("`", "")
    record = RunRecord(
        run_id=result.run_id,
        channel="",
        thread_ts="",
        requested_by="api:claude",
        task=result.task,
        status=RunStatus.FINISHED,
        trace_json=result.to_json(),
        created_at=AT,
        updated_at=AT,
    )
    mcp_text = verdict_text(investigation(record, Links(trace=None, workspace_url="")))
    assert f"Action: step 2 rollback_deployment order-service v2.13.2: denied by U0BOB42 at 19:16 UTC: {REASON}" in (
        mcp_text
    )

    facts = trace_facts(result, "trace.json")
    postmortem = (await draft_postmortem(facts, None, now=AT)).markdown
    assert "- Step 2: rollback\\_deployment order-service v2.13.2: denied by U0BOB42 at 2026-11-30 19:16:00 UTC" in (
        postmortem
    )
    assert "by hand, if you agree (step 2 was denied)" in postmortem
    status = await draft_status(facts, None)
    assert "Proposed, not done: rollback_deployment (denied)." in status.parts["doing"]


async def test_a_rollback_the_read_only_policy_refused_says_so_on_every_surface_without_the_models_hint(tools):
    result = await rollback_run(tools, SideEffectMode.READ_ONLY)
    refused = "refused: side effects are disabled by policy (read_only)"
    slack = "\n".join(texts_of(final_summary(verdict_of(result), step_url=no_step_urls)))
    outcome = run_page(result).split('id="outcome"')[1].split("</section>")[0]  # the steps show what the model saw
    shown = [slack, on_the_terminal(result), outcome, verdict_shape(verdict_of(result)).actions[0].said]
    for surface in shown:
        assert refused in surface
        assert "read-only tool" not in surface
        assert "ask the user" not in surface
