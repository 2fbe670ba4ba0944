"""Why a run did not start, in words for the person who asked: the access policy's facts said in Slack.

Channels are Slack links and times are Slack dates (each reader sees their own time zone).
"""

from __future__ import annotations

from datetime import datetime
from typing import assert_never

from bot.access.policy import RefusalReason, Refused
from bot.slack.mrkdwn import slack_date
from bot.words import duration


def refusal_text(refused: Refused, *, now: datetime) -> str:
    """What to tell the person (or the alert's thread) whose run was refused, and when to try again."""
    match refused.reason:
        case RefusalReason.WORKSPACE:
            return (
                "I only take investigations from members of the workspace I am installed in. "
                "Ask someone there to start it, or an admin to add your workspace to `allowed_workspaces`."
            )
        case RefusalReason.CHANNEL:
            places = ", ".join(f"<#{channel}>" for channel in refused.channels)
            return f"investigations can't be started in this channel. Ask in {places}."
        case RefusalReason.CONCURRENT_RUNS:
            return (
                f"the most investigations I run at once ({refused.limit:g}) are running. "
                "Try again when one ends (most take a few minutes)."
            )
        case RefusalReason.DAILY_SPEND:
            return (
                f"today's model spend cap (${refused.limit or 0:,.2f}) is reached (${refused.used or 0:,.2f} spent). "
                f"New investigations can start again {_when(refused, now)}."
            )
        case RefusalReason.USER_RATE:
            return (
                f"you started {refused.used:g} investigations in the last hour, the most one person may. "
                f"You can start another {_when(refused, now)}."
            )
        case RefusalReason.CHANNEL_RATE:
            return (
                f"this channel started {refused.used:g} investigations in the last hour, the most allowed. "
                f"The next can start {_when(refused, now)}."
            )
        case _:
            assert_never(refused.reason)


def _when(refused: Refused, now: datetime) -> str:
    """The moment trying again can work, as each reader's local time, and how far off it is."""
    at = refused.retry_at or now
    return f"at {slack_date(at)} (in {duration(max((at - now).total_seconds(), 0) * 1000)})"
