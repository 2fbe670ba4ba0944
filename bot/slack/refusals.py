"""Why a request was turned away, in words for the person who made it: the gate's facts said in Slack.

One sentence per rule, with the action the person tried; channels are Slack links and times are Slack dates
(each reader sees their own time zone).
"""

from __future__ import annotations

from datetime import datetime
from typing import assert_never

from bot.access.identity import Approvers
from bot.access.refusals import AccessRefused, Action, RefusalReason
from bot.slack.approval_words import approver_mentions
from bot.slack.mrkdwn import slack_date, user_ref
from bot.words import duration

DOING: dict[Action, str] = {
    Action.START: "start OpsAgent investigations",
    Action.DRAFT: "have OpsAgent drafts made",
    Action.GUIDE: "guide OpsAgent investigations",
    Action.STOP: "stop OpsAgent investigations",
    Action.APPROVE: "approve OpsAgent actions",
    Action.RATE: "rate OpsAgent verdicts",
}
"""What each action is, after “cannot”."""
NOT_DONE: dict[Action, str] = {
    Action.START: "Not started",
    Action.DRAFT: "No draft",
    Action.GUIDE: "Not passed on",
    Action.STOP: "Not stopped",
    Action.APPROVE: "Nothing decided",
    Action.RATE: "Not kept",
}
"""How a refusal begins, by what did not happen."""


def refusal_text(refused: AccessRefused, *, now: datetime, approvers: Approvers, requested_by: str = "") -> str:
    """What to tell the person (or an alert's thread) whose request was refused, and what they can do instead.

    `approvers`: who may approve (named as mentions); `requested_by`: the requester of the run a Stop was refused
    for."""
    action = refused.action
    match refused.reason:
        case (
            RefusalReason.WORKSPACE
            | RefusalReason.GUEST
            | RefusalReason.BOT
            | RefusalReason.DEACTIVATED
            | RefusalReason.NOT_AN_APPROVER
            | RefusalReason.DIRECTORY_UNAVAILABLE
            | RefusalReason.NOT_THEIR_MODAL
            | RefusalReason.API_CLIENT
        ):
            return _who_words(refused.reason, action, approvers=approver_mentions(approvers), requested_by=requested_by)
        case RefusalReason.GUIDANCE_TOO_LONG:
            return (
                f"{NOT_DONE[action]}: guidance is at most {refused.limit or 0:,.0f} characters in one message. "
                "Say it shorter, or in two messages."
            )
        case RefusalReason.GUIDANCE_LIMIT:
            return (
                f"{NOT_DONE[action]}: this investigation has taken {refused.limit or 0:g} messages of guidance, "
                "the most one run takes. Stop it (“@opsagent stop”) and start a new one with what you know."
            )
        case (
            RefusalReason.CHANNEL
            | RefusalReason.CONCURRENT_RUNS
            | RefusalReason.DAILY_SPEND
            | RefusalReason.USER_RATE
            | RefusalReason.CHANNEL_RATE
        ):
            return f"{NOT_DONE[action]}: {_limit_words(refused, now)}"
        case _:
            assert_never(refused.reason)


def _who_words(reason: RefusalReason, action: Action, *, approvers: str, requested_by: str) -> str:
    """A refusal for who the person is: why, then who can do it instead."""
    doing = DOING[action]
    match reason:
        case RefusalReason.WORKSPACE if action is Action.START:
            return (
                "I only take investigations from members of the workspace I am installed in. "
                "Ask someone there to start it, or an admin to add your workspace to `allowed_workspaces`."
            )
        case RefusalReason.WORKSPACE:
            why = f"Only members of the workspace that installed OpsAgent can {doing}."
        case RefusalReason.GUEST:
            why = f"Guests cannot {doing}."
        case RefusalReason.BOT:
            why = f"Bot users cannot {doing}."
        case RefusalReason.DEACTIVATED:
            why = f"Deactivated users cannot {doing}."
        case RefusalReason.NOT_AN_APPROVER if action is Action.STOP:
            why = "Only the person who asked for this investigation and the approvers can stop it."
        case RefusalReason.NOT_AN_APPROVER:
            why = f"Only approvers can {doing}. Approvers: {approvers}."
        case RefusalReason.DIRECTORY_UNAVAILABLE:
            return f"{NOT_DONE[action]}: Slack could not tell me who you are just now; try again in a moment."
        case RefusalReason.NOT_THEIR_MODAL:
            return "Not kept: this form does not belong to a 👎 of yours on this investigation. Click 👎 again."
        case RefusalReason.API_CLIENT:
            why = f"API clients cannot {doing}: that stays with people in Slack."
        case _:
            raise ValueError(f"{reason} is a limit, not a reason about who asks")
    if action is Action.STOP and requested_by:
        return f"{why} Ask {user_ref(requested_by)} or an approver ({approvers}) to stop it."
    return why


def _limit_words(refused: AccessRefused, now: datetime) -> str:
    """A refusal for a limit: which, and when trying again can work."""
    work = "investigations and drafts" if refused.action is Action.DRAFT else "investigations"
    match refused.reason:
        case RefusalReason.CHANNEL:
            places = ", ".join(f"<#{channel}>" for channel in refused.channels)
            return f"{work} can't be started in this channel. Ask in {places}."
        case RefusalReason.CONCURRENT_RUNS:
            return (
                f"the most investigations I run at once ({refused.limit:g}) are running. "
                "Try again when one ends (most take a few minutes)."
            )
        case RefusalReason.DAILY_SPEND:
            return (
                f"today's model spend cap (${refused.limit or 0:,.2f}) is reached (${refused.used or 0:,.2f} spent). "
                f"New {work} can start again {_when(refused, now)}."
            )
        case RefusalReason.USER_RATE:
            return (
                f"you started {refused.used:g} {work} in the last hour, the most one person may. "
                f"You can start another {_when(refused, now)}."
            )
        case RefusalReason.CHANNEL_RATE:
            return (
                f"this channel started {refused.used:g} {work} in the last hour, the most allowed. "
                f"The next can start {_when(refused, now)}."
            )
        case _:
            raise ValueError(f"{refused.reason} is about who asks, not a limit")


def _when(refused: AccessRefused, now: datetime) -> str:
    """The moment trying again can work, as each reader's local time, and how far off it is."""
    at = refused.retry_at or now
    return f"at {slack_date(at)} (in {duration(max((at - now).total_seconds(), 0) * 1000)})"
