"""Who may cause side effects, and how: the rollout policy and the approval decision types.

Read-only is the default; nothing with side effects runs without a matching human approval.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from kernel.calls import ToolCall


class SideEffectMode(StrEnum):
    """The rollout path of side effects, from safest to most capable."""

    READ_ONLY = "read_only"
    """Every side-effect tool is refused."""
    DRY_RUN = "dry_run"
    """Side-effect tools return what they would do, and do nothing."""
    ALLOWLIST = "allowlist"
    """Only the listed side-effect tools may run, each after a human approval."""
    FULL = "full"
    """Any side-effect tool may run, each after a human approval."""


class SideEffectPolicy(BaseModel):
    """Configuration, not code: which side effects a run may attempt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: SideEffectMode = SideEffectMode.READ_ONLY
    allowlist: frozenset[str] = frozenset()
    """Tool names allowed in `allowlist` mode."""

    def refusal(self, tool_name: str) -> str | None:
        """Why the policy refuses this side-effect tool outright, or None if it may proceed."""
        match self.mode:
            case SideEffectMode.READ_ONLY:
                return "side effects are disabled by policy (read_only)"
            case SideEffectMode.ALLOWLIST if tool_name not in self.allowlist:
                return f"'{tool_name}' is not in the side-effect allowlist"
            case _:
                return None


class ApprovalRequest(BaseModel):
    """What a human is asked to approve: one exact call, bound by the hash of its canonical arguments."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    step: int
    call: ToolCall
    args_hash: str
    thought: str
    """The model's reasoning for the action, shown to the approver."""
    summary: str = ""
    """The tool's summary for people (`Tool.summary`), so the approver knows what it does; never the model's
    description, which tells the model when to use it."""


def _now() -> datetime:
    return datetime.now(UTC)


class Approved(BaseModel):
    """A human approved the call whose hash is `args_hash`."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["approved"] = "approved"
    by: str
    args_hash: str
    """Must equal the request's hash: an approval for another call is refused."""
    at: datetime = Field(default_factory=_now)
    note: str = ""


class Denied(BaseModel):
    """A human (or the expiry of the request) denied the call; the model sees the reason."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["denied"] = "denied"
    by: str
    reason: str = "denied by the approver"
    at: datetime = Field(default_factory=_now)


class Deferred(BaseModel):
    """No decision yet: the run pauses (`awaiting_approval`) and resumes with the decision later."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["deferred"] = "deferred"
    approval_id: str


Decision = Annotated[Approved | Denied | Deferred, Field(discriminator="kind")]
"""What a confirm hook returns."""

ConfirmHook = Callable[[ApprovalRequest], Awaitable[Approved | Denied | Deferred]]
"""Asks a human about one side-effect call; the Slack bot's hook posts Approve/Deny buttons."""
