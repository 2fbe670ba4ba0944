"""Approvals said in Slack: a refused approval in a line, with who refused it as a mention and when as each reader's
own time (`<!date^…>`).

The trace gives the fact (`bot.verdict.Refusal`); the words, the mentions and the times are made here.
"""

from __future__ import annotations

from bot.slack.mrkdwn import clip_literal, slack_date, user_ref
from bot.verdict import Refusal

REASON_CHARS = 300
"""A refusal's reason is cut to this in a line."""


def refusal_line(refusal: Refusal) -> str:
    """A refused approval in mrkdwn (`Refusal.said`): "denied by <@U…> at <!date^…>: not during peak traffic"."""
    return refusal.said(
        person=user_ref,
        moment=lambda at: slack_date(at, "{time}"),
        text=lambda reason: clip_literal(reason, REASON_CHARS),
    )
