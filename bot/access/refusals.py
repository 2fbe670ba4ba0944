"""Why the gate turned a request away: facts, not words (`bot.slack.refusals` says them to the person).

One reason set for every way in, so a guest's refusal is the same fact whether they mentioned, clicked or rated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Action(StrEnum):
    """What the refused person tried to do: the words of a refusal name it."""

    START = "start"
    """Start an investigation (a mention, a follow-up, an alert)."""
    DRAFT = "draft"
    """Have a postmortem or status draft made."""
    GUIDE = "guide"
    """Tell a running investigation something (guidance)."""
    STOP = "stop"
    APPROVE = "approve"
    """Approve or deny an action."""
    RATE = "rate"
    """Rate a verdict (👍/👎) or say why."""


class RefusalReason(StrEnum):
    """Which rule turned a request away: who the person is first, then where, then the limits."""

    WORKSPACE = "workspace"
    """Another workspace (Slack Connect), or none named."""
    GUEST = "guest"
    BOT = "bot"
    """A bot: not answered (two bots must not loop), only logged and audited."""
    DEACTIVATED = "deactivated"
    NOT_AN_APPROVER = "not_an_approver"
    """The request needs an approver (approving, or stopping/rating when `[access]` says approvers only)."""
    DIRECTORY_UNAVAILABLE = "directory_unavailable"
    """Slack could not say who the person is: refused, fail closed; trying again can work."""
    API_CLIENT = "api_client"
    """An API client asked for what only people may do (approve, stop, rate, draft): it may start runs and guide
    them, nothing more."""
    NOT_THEIR_MODAL = "not_their_modal"
    """A modal submission that no 👎 of this person on this run opened."""
    GUIDANCE_TOO_LONG = "guidance_too_long"
    """Guidance longer than the gate takes in one message (`limit`, in characters)."""
    GUIDANCE_LIMIT = "guidance_limit"
    """The run holds `[access] max_guidance` messages already (`limit`)."""
    CHANNEL = "channel"
    CONCURRENT_RUNS = "concurrent_runs"
    """Decided by the run store, which holds one slot per unfinished run across replicas (`Gate.at_capacity`)."""
    DAILY_SPEND = "daily_spend"
    USER_RATE = "user_rate"
    CHANNEL_RATE = "channel_rate"


@dataclass(frozen=True, slots=True)
class AccessRefused:
    """The gate's refusal: which rule said no to which action, with the facts the person should hear."""

    reason: RefusalReason
    action: Action = Action.START
    retry_at: datetime | None = None
    """When trying again can work; None: waiting alone will not help (wrong workspace or channel), or no
    time can be known (concurrency)."""
    limit: float | None = None
    """The limit that was reached: runs at once or per hour, or the daily spend in USD."""
    used: float | None = None
    """What was counted against `limit`: starts in the window, or USD spent today."""
    channels: tuple[str, ...] = ()
    """For `CHANNEL`: the channels where runs may start."""
