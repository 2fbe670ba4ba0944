"""`[access]` settings: who may start, stop and rate investigations, how many at once, how often, the daily spend cap.

Plain data, so reading the configuration loads no service.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Stoppers(StrEnum):
    """Who may stop someone else's investigation, besides the person who asked for it (who always may)."""

    MEMBERS = "members"
    """Approvers and every member of the installing workspace who is not a guest (nor a bot, nor deactivated)."""
    APPROVERS = "approvers"
    """The approvers only (`[slack] approvers` and `approver_groups`)."""


class Raters(StrEnum):
    """Who may rate a run's verdict (👍/👎, and why): what `eval export --feedback` and later runs' memory trust."""

    ASKERS = "askers"
    """Everyone who may start runs (the default): members of the allowed workspaces, guests only with
    `allow_guests`."""
    APPROVERS = "approvers"
    """The approvers only."""


class AccessSettings(BaseModel):
    """`[access]`: who may start, stop and rate investigations, and how many; every limit applies to what starts
    work for the model (runs and drafts)."""

    model_config = ConfigDict(extra="forbid")

    allowed_workspaces: list[str] = Field(default_factory=list)
    """Workspace (T…) or org (E…) ids whose members may start runs, besides the installing workspace, which
    always may. Empty: only the installing one, so Slack Connect guests from other companies are refused."""
    allowed_channels: list[str] = Field(default_factory=list)
    """Channel ids where runs may start (alert-started ones too). Empty: any channel the bot was invited to."""
    runs_per_user_per_hour: int | None = Field(default=12, ge=1)
    """Runs one person may start in any hour. A run may last `budget.max_seconds` (300 s), so 12 lets a person
    investigate back to back all hour; more is a script or a loop. None (from code): no limit. Alert-started runs skip it."""
    runs_per_channel_per_hour: int | None = Field(default=36, ge=1)
    """Runs one channel may start in any hour: three people investigating back to back, or an alert storm
    throttled. None (from code): no limit."""
    max_concurrent_runs: int = Field(default=10, ge=1)
    """Runs unfinished at once across every replica sharing the run store (a run waiting for an approval counts):
    each run holds one of these slots in the store from its start until it ends, so simultaneous mentions on any
    replica cannot start more. Each replica also takes over no more runs than this."""
    allowed_bots: list[str] = Field(default_factory=list)
    """Bot ids (B…) whose messages may start runs. Empty: no bot may, so two bots cannot loop on each other and
    every run has a person as its requester. A bot message without a user is refused unless its bot is listed."""
    who_may_stop: Stoppers = Stoppers.MEMBERS
    """Who may stop a run besides its requester: `members` (approvers and members of the installing workspace who
    are not guests) or `approvers`. Others (Slack Connect users of other workspaces, guests) are refused, privately."""
    allow_guests: bool = False
    """Whether guests (single- and multi-channel) may start runs, ask for drafts and guide runs. Off: a guest in an
    incident channel (a vendor, a contractor) reads the thread but does not spend the team's model budget or steer
    its investigations. Guests never approve or stop others' runs."""
    who_may_rate: Raters = Raters.ASKERS
    """Who may rate a run's verdict: `askers` (everyone who may start runs) or `approvers`. A rating becomes
    the team's judgement in later runs' memory and in `eval export --feedback`, so strangers may not give one."""
    max_guidance: int = Field(default=10, ge=1)
    """Messages of guidance one run takes (mentions in its thread while it runs); past that, each is refused with an
    ephemeral: a run told more than this needs a fresh start with what is known."""
    daily_spend_usd: float | None = Field(default=None, gt=0)
    """Model spend (USD) of all runs per UTC day, finished and in flight, after which new runs are refused
    until midnight UTC. Needs the model's price in `[llm.prices]`. None: no cap."""
