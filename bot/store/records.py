"""What the run store keeps: runs (status, owner, checkpoint), feedback, side effects, alert threads and the checks
of approved actions, typed.

Shared by the store protocol, both SQL dialects and their callers; plain data with no database behind it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, field_validator

from kernel import Verification
from opsagent_tools.actions.journal import SideEffectState
from opsagent_tools.time_words import utc_now as utc_now  # the stores' default clock, re-exported for bot/


class RunStatus(StrEnum):
    """Where a run is: only `finished` runs are never resumed."""

    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    FINISHED = "finished"
    """Ended with any stop reason; the trace says which."""


class RunRecord(BaseModel):
    """One investigation: where it was asked, by whom, its checkpoint, and which replica holds it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    channel: str
    thread_ts: str
    requested_by: str
    team_id: str = ""
    task: str
    task_data: str = ""
    """What the task came with from elsewhere (an alert's details, an earlier answer), fenced as data for the model."""
    mention_ts: str = ""
    status: RunStatus
    trace_json: str = ""
    """The kernel's `RunResult.to_json()`: the checkpoint a resumed run continues from."""
    owner: str = ""
    """The replica holding the lease; empty when none does."""
    lease_until: AwareDatetime | None = None
    created_at: AwareDatetime
    updated_at: AwareDatetime
    stop_requested_by: str = ""
    """Who stopped the run (a Slack user id, or `alertmanager`), once someone has: the replica carrying it ends it."""
    summary_ts: str = ""
    """The run's summary message in its thread, once posted: a resumed run (or its end) keeps updating that one."""
    alert_labels: tuple[dict[str, str], ...] = ()
    """The labels of each alert an alert-started run investigates (none for a run a person asked for): what the
    memory of past incidents and a postmortem's detection section read. The store keeps them as JSON."""

    @field_validator("alert_labels", mode="before")
    @classmethod
    def _labels_from_json(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value


class Rating(StrEnum):
    """A person's verdict on a run's answer: the 👍/👎 on its final message."""

    UP = "up"
    DOWN = "down"


class FeedbackRecord(BaseModel):
    """One person's rating of one run's answer, the latest they gave, with the reason they wrote (if any)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    user: str
    rating: Rating
    reason: str = ""
    """Why, in the person's words (from a 👎's reason), redacted like any text that reaches the store."""
    at: AwareDatetime


class GuidanceRecord(BaseModel):
    """One message a person gave a running investigation (a mention in its thread), numbered in the run's order."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    seq: int = 0
    """1, 2, … in the order the run received them; 0 on a record not kept yet."""
    user: str
    name: str = ""
    """How Slack showed the person when they said it; "" when it could not say."""
    text: str
    """Redacted, like any text that reaches the store."""
    message_ts: str = ""
    """The message it came in (it gets the ✍️): "" when it came another way (the API, the terminal)."""
    at: AwareDatetime


class ScheduledCheck(BaseModel):
    """One check of an approved action, kept in the store until it has run and is in its run's trace."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    step: int
    """The action's step."""
    check: int
    """1 for the first check, 2 for the second ("still holding?")."""
    due_at: AwareDatetime
    action_at: AwareDatetime
    """When the action ran: what the check compares with."""
    approval_ts: str = ""
    """The action's approval message, collapsed to its one line (which says the outcome); "" when unknown."""
    approver: str = ""
    """Who approved the action (a Slack user id): a check that finds it did not hold mentions them."""
    result: Verification | None = None
    """What the check found, once it ran; it then waits for its run to finish to be written into its trace."""

    @field_validator("result", mode="before")
    @classmethod
    def _result_from_json(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value


class SideEffectRecord(BaseModel):
    """One side-effect call, keyed by the idempotency key sent to the action webhook."""

    model_config = ConfigDict(frozen=True)

    key: str
    run_id: str
    step: int
    tool: str
    args_hash: str
    approval_id: str = ""
    state: SideEffectState
    outcome: str = ""
    started_at: AwareDatetime
    finished_at: AwareDatetime | None = None


@dataclass(frozen=True)
class AlertThread:
    """The thread of one alert group: where it is, which alerts it has announced, the run it started."""

    channel: str
    thread_ts: str
    fingerprints: frozenset[str]
    run_id: str | None
    """None when the bot could not start a run (at capacity, shutting down): the thread says why."""
