"""What a check of an approved action says in its run's thread: the action's one line (its approval message, collapsed)
gains the check; a check that found it did not hold is also a reply mentioning the approver, so that it notifies
them; and once the check is in the finished run's trace, the verdict in the summary shows it.

Posts and updates go through the outbox and the message writers, as a run's own do: a check never waits on Slack.
"""

from __future__ import annotations

from bot.slack.approval_blocks import action_done
from bot.slack.approval_words import did_not_hold_words
from bot.slack.blocks import StepUrl
from bot.slack.outbox import Outbox
from bot.slack.run_thread import TraceLink
from bot.slack.summary import final_summary
from bot.slack.updates import MessageUpdates
from bot.verdict import step_line, verdict_of
from kernel import RunResult, Verification, VerificationOutcome


class CheckMessages:
    """A check's messages in the run's thread (`trace_link`: the trace viewer's link of a run, for its steps)."""

    def __init__(self, *, outbox: Outbox, updates: MessageUpdates, trace_link: TraceLink | None = None) -> None:
        self._outbox, self._updates, self._trace_link = outbox, updates, trace_link

    def checked(
        self, trace: RunResult, found: Verification, *, channel: str, thread_ts: str, approval_ts: str, approver: str
    ) -> None:
        """A check was made: the action's line says it (when its approval message is known, `approval_ts`), and a
        check that did not hold is said to the approver in a reply of its own."""
        step = next((s for s in trace.steps if s.index == found.step), None)
        if step is None or not channel:
            return
        line = step_line(step)
        if approval_ts:
            self._updates.set(channel, approval_ts, action_done(line, self._step_urls(trace.run_id), found))
        if found.outcome is VerificationOutcome.DID_NOT_HOLD:
            text = did_not_hold_words(found, step=line.index, call=line.call, approver=approver)
            self._outbox.enqueue("chat_postMessage", channel, thread_ts=thread_ts, text=text)

    def recorded(self, trace: RunResult, *, channel: str, summary_ts: str, stopped_by: str = "") -> None:
        """The finished run's trace holds a new check: its summary (the verdict) is written again, showing it."""
        if not channel or not summary_ts:
            return
        verdict = verdict_of(trace, stopped_by=stopped_by)
        trace_url = self._trace_link(trace.run_id) if self._trace_link is not None else None
        summary = final_summary(verdict, step_url=self._step_urls(trace.run_id), trace_url=trace_url)
        self._updates.set(channel, summary_ts, summary)

    def _step_urls(self, run_id: str) -> StepUrl:
        """The trace viewer's anchor of each step of the run, as its own thread links them (None without a viewer)."""
        trace_url = self._trace_link(run_id) if self._trace_link is not None else None
        return lambda index: f"{trace_url}#step-{index}" if trace_url else None
