"""A run posted in no channel (an API run started without one): it shows itself nowhere in Slack, yet no side effect
of it runs without a person.

Its approvals go to `[api] approval_channel`, each in the thread of a message saying which API client's run asks and
what it investigates; once decided and run, the approval collapses to the action's outcome as in a run's own thread.
With no approval channel, a side effect is denied at once, and the run's verdict says why.
"""

from __future__ import annotations

import structlog

from bot.approvals.broker import ApprovalBroker
from bot.slack.api_runs import quiet_approval_context
from bot.slack.approval_blocks import action_done
from bot.slack.outbox import Outbox
from bot.slack.updates import MessageUpdates
from bot.store.records import RunRecord
from bot.verdict import step_line
from bot.words import BROKER_USER
from kernel import ApprovalRequest, Approved, ConfirmHook, Deferred, Denied, RunResult, Step, TakenGuidance, ToolCall

log = structlog.get_logger("opsagent.investigations")

NO_APPROVER_REASON = (
    "no person could approve it: the investigation was started through the API without a Slack channel, and "
    "[api] approval_channel is not set, so its side effects are denied"
)
"""Why a side effect of a run posted in no channel is denied when there is no approval channel (the model reads it;
the verdict shows it as the step's refusal)."""


class QuietRun:
    """The `RunSurface` of a run posted in no channel: silent, but for its approvals' outcomes in `approvals` (the
    approval channel; "" for none)."""

    def __init__(self, *, run_id: str, updates: MessageUpdates, approvals: str, trace_url: str | None) -> None:
        self._run_id = run_id
        self._updates = updates
        self._approvals = approvals
        self._trace_url = trace_url

    async def opened(self) -> None:
        """Nothing to post: the API client reads the run from the API."""

    async def resumed(self, checkpoint: RunResult | None) -> None:
        """Nothing to post: the run's events continue where they were."""

    def interrupted(self, steps: int) -> None:
        """Nothing to post: the run continues in the next process."""

    def step_started(self, index: int, call: ToolCall, *, together: tuple[int, ...] = ()) -> None:
        """Nothing to post."""

    def step(self, step: Step, *, approval_ts: str = "") -> None:
        """A decided side effect's approval message (in the approval channel) becomes its outcome's line."""
        if approval_ts and self._approvals and step.approval is not None and not step.pending:
            url = self._trace_url
            self._updates.set(
                self._approvals, approval_ts, action_done(step_line(step), lambda i: f"{url}#step-{i}" if url else None)
            )

    def guidance_taken(self, taken: TakenGuidance) -> None:
        """Nothing to post: the API client gave it, and reads it in the run's events."""

    def finished(self, result: RunResult, *, stopped_by: str = "") -> None:
        """Nothing to post: the API client reads the verdict from the API."""

    def reply(self, text: str) -> None:
        """No thread to say it in: logged."""
        log.info("quiet_run_note", run_id=self._run_id, note=text[:300])


def quiet_approvals(
    broker: ApprovalBroker, outbox: Outbox, record: RunRecord, *, channel: str, trace_url: str | None
) -> ConfirmHook:
    """The confirm hook of a run posted in no channel: each approval in the thread of a message in `channel` that
    says whose run asks and for what; with no `channel`, a denial (`NO_APPROVER_REASON`)."""

    async def confirm(request: ApprovalRequest) -> Approved | Denied | Deferred:
        if not channel:
            return Denied(by=BROKER_USER, reason=NO_APPROVER_REASON)
        context = quiet_approval_context(record.run_id, record.requested_by, record.task, trace_url)
        answer = await outbox.send("chat_postMessage", channel, **context.as_kwargs())
        thread_ts = str((answer or {}).get("ts") or "")
        if not thread_ts:  # the kernel denies the call, saying the approval request failed
            raise ConnectionError(f"Slack did not post the approval's message in {channel}")
        return await broker.confirm_hook(record.run_id, channel, thread_ts, record.requested_by)(request)

    return confirm
