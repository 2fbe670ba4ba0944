"""`[slack]` settings and the app's credentials: who may approve, message spacing, tokens from the environment.

Plain data, kept apart from the Bolt app so that reading the configuration loads no Slack machinery.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

POST_INTERVAL_S = 1.0
"""Slack's chat.postMessage allows about one message per second per channel (short bursts aside)."""
STEP_BATCH_S = 3.0
"""How long a step's reply waits for the next steps to join it: one message (and one notification) for a few steps."""


class SlackSettings(BaseModel):
    """`[slack]`: who may approve, limits of the bot, what the channel sees. Tokens come from the environment only."""

    model_config = ConfigDict(extra="forbid")

    approvers: list[str] = Field(default_factory=list)
    """Slack user ids allowed to approve side effects."""
    approver_groups: list[str] = Field(default_factory=list)
    """Slack user group ids (S…) whose members may approve."""
    allow_self_approval: bool = False
    """Whether the person who started a run may approve its actions (a two-person rule when False)."""
    approval_ttl_s: float = Field(default=900.0, gt=0)
    """Pending approvals expire (as a denial) after this long."""
    post_interval_s: float = Field(default=POST_INTERVAL_S, ge=0)
    """Spacing of messages per channel (Slack allows about one per second)."""
    step_batch_s: float = Field(default=STEP_BATCH_S, ge=0)
    """How long a step's reply waits for the steps after it to join it in one message (0: none waits)."""
    broadcast_verdict: bool = True
    """Whether a run asked for by a message ends with its one-line verdict sent to the channel too (Slack's "also
    send to channel"), with a link to the thread. An alert's run never is: its thread opens at the channel's top."""

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "max_concurrent_runs" in data:
            raise ValueError(
                "`max_concurrent_runs` moved from [slack] to [access]: move that line to an [access] section"
            )
        return data


@dataclass(frozen=True)
class SlackSecrets:
    """The app's credentials and endpoint, from `SLACK_BOT_TOKEN`, `SLACK_SIGNING_SECRET`, `SLACK_APP_TOKEN`, `SLACK_API_URL`."""

    bot_token: str
    signing_secret: str | None
    app_token: str | None
    api_url: str | None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> SlackSecrets:
        """Read them; a missing bot token is a configuration error."""
        token = environ.get("SLACK_BOT_TOKEN", "")
        if not token:
            raise ValueError("SLACK_BOT_TOKEN is not set: the bot token (xoxb-…) of the Slack app")
        return cls(
            token,
            environ.get("SLACK_SIGNING_SECRET") or None,
            environ.get("SLACK_APP_TOKEN") or None,
            environ.get("SLACK_API_URL") or None,
        )
