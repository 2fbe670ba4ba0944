"""Who may start an investigation, and how often: bots, workspaces, channels, rate limits, concurrency, daily spend.

`decide` is the one pure decision (given the clock and what the ledger counted); `AccessPolicy` feeds it,
records the runs it admits, and follows every run's spend through the kernel's events.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from enum import StrEnum
from typing import Any, Protocol, assert_never

import structlog

from bot.access.ledger import InMemoryRunLedger, RunLedger
from bot.access.settings import AccessSettings
from kernel import Event, RunFinished, RunStarted, StepCompleted, StepStarted

log = structlog.get_logger("opsagent.access")

RATE_WINDOW = timedelta(hours=1)
"""The sliding window of the per-user and per-channel limits."""
AUTHOR_TEAM_FIELDS = ("user_team", "source_team", "team")
"""Where a message event names its author's workspace; in a Slack Connect channel an external author's
workspace shows there, while the envelope's `team_id`/`authorizations` name ours (the receiving install)."""


class RefusalReason(StrEnum):
    """Which rule turned a request away."""

    WORKSPACE = "workspace"
    CHANNEL = "channel"
    CONCURRENT_RUNS = "concurrent_runs"
    """Decided by the run store, which holds one slot per unfinished run across replicas (`AccessPolicy.at_capacity`)."""
    DAILY_SPEND = "daily_spend"
    USER_RATE = "user_rate"
    CHANNEL_RATE = "channel_rate"


@dataclass(frozen=True)
class Allowed:
    """The run may start."""


@dataclass(frozen=True)
class Refused:
    """The run may not start: which rule said no, with the facts the person asking should hear.

    Facts, not words: `bot.slack.refusals` says them in Slack, so the rule and its wording change apart.
    """

    reason: RefusalReason
    retry_at: datetime | None = None
    """When trying again can work; None: waiting alone will not help (wrong workspace or channel), or no
    time can be known (concurrency)."""
    limit: float | None = None
    """The limit that was reached: runs at once or per hour, or the daily spend in USD."""
    used: float | None = None
    """What was counted against `limit`: starts in the window, or USD spent today."""
    channels: tuple[str, ...] = ()
    """For `CHANNEL`: the channels where runs may start."""


AccessDecision = Allowed | Refused


@dataclass(frozen=True)
class Admitted:
    """`AccessPolicy.admit` let `request` start a run, counted as started `at` until withdrawn (it did not start)."""

    request: RunRequest
    at: datetime


@dataclass(frozen=True)
class RunRequest:
    """Someone, or an alert, asking for a run in a channel."""

    user: str
    """The Slack user id, or the name of what started it (`alertmanager`)."""
    channel: str
    teams: tuple[str, ...] | None
    """The workspaces the event names for its author (see `author_teams`); None: not asked by a person in Slack
    (an alert, from a receiver that authenticates on its own), so the workspace and per-user rules do not apply."""


@dataclass(frozen=True)
class RecentUse:
    """What the ledger counted, as `decide` needs it."""

    user_starts: Sequence[datetime]
    """Start times of the user's runs within `RATE_WINDOW`, oldest first."""
    channel_starts: Sequence[datetime]
    spent_today_usd: float


def decide(
    request: RunRequest, *, settings: AccessSettings, workspaces: frozenset[str], recent: RecentUse, now: datetime
) -> AccessDecision:
    """Whether `request` may start a run now; identity rules first (limits are no business of outsiders).

    `workspaces` are the ones whose members may ask (the installing one and `allowed_workspaces`).
    """
    if request.teams is not None and (not request.teams or not set(request.teams) <= workspaces):
        return Refused(RefusalReason.WORKSPACE)
    if settings.allowed_channels and request.channel not in settings.allowed_channels:
        return Refused(RefusalReason.CHANNEL, channels=tuple(settings.allowed_channels))
    if settings.daily_spend_usd is not None and recent.spent_today_usd >= settings.daily_spend_usd:
        reset = datetime.combine(now.astimezone(UTC).date() + timedelta(days=1), time(), UTC)
        return Refused(
            RefusalReason.DAILY_SPEND, retry_at=reset, limit=settings.daily_spend_usd, used=recent.spent_today_usd
        )
    per_user = settings.runs_per_user_per_hour if request.teams is not None else None
    if (retry := _window_frees(recent.user_starts, per_user)) is not None:
        return Refused(RefusalReason.USER_RATE, retry_at=retry, limit=per_user, used=len(recent.user_starts))
    per_channel = settings.runs_per_channel_per_hour
    if (retry := _window_frees(recent.channel_starts, per_channel)) is not None:
        return Refused(RefusalReason.CHANNEL_RATE, retry_at=retry, limit=per_channel, used=len(recent.channel_starts))
    return Allowed()


def author_teams(event: Mapping[str, Any]) -> tuple[str, ...]:
    """The workspaces a message event names for its author (`user_team`, `source_team`, `team`), each once.

    All must be allowed: an external Slack Connect author shows their own workspace there even though the
    event reaches our installation. None at all is refused as an unknown workspace.
    """
    return tuple(dict.fromkeys(str(event[field]) for field in AUTHOR_TEAM_FIELDS if event.get(field)))


def requester_of(event: Mapping[str, Any], allowed_bots: Collection[str]) -> str | None:
    """Who asks in a message event: the person's user id; None when a bot wrote it (its `bot_id`, or a bot message
    with no user at all), unless that bot is in `allowed_bots` (then its user id, else its bot id).

    So two bots cannot keep each other busy, and no run has an anonymous requester.
    """
    bot_id = str(event.get("bot_id") or "")
    user = str(event.get("user") or "")
    if bot_id or event.get("subtype") == "bot_message" or not user:
        return (user or bot_id) if bot_id and bot_id in allowed_bots else None
    return user


class _Run(Protocol):
    """What the policy needs of a run it follows (an `ActiveRun` of the run service)."""

    run_id: str


class AccessPolicy:
    """Admits or refuses new runs by `decide`, counting the admitted ones and every run's spend in a ledger.

    A `RunObserver`: it reads each run's usage from `StepCompleted` and `RunFinished` (in-flight spend counts).
    """

    def __init__(
        self,
        settings: AccessSettings,
        *,
        installing_team: str,
        ledger: RunLedger | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.settings = settings
        self._workspaces = frozenset({installing_team, *settings.allowed_workspaces})
        self._ledger: RunLedger = ledger or InMemoryRunLedger()
        self._clock = clock

    def now(self) -> datetime:
        """The time by the policy's clock (the one its limits count by)."""
        return self._clock()

    def admit(self, request: RunRequest) -> Admitted | Refused:
        """Decide on `request`; an admitted run is counted at once (no await in between, so simultaneous
        requests cannot all pass one check), a refusal is logged with its reason.

        The concurrency cap is the run store's to decide, when the run is stored (`at_capacity`)."""
        now = self._clock()
        user_starts, channel_starts = self._ledger.starts_since(
            user=request.user, channel=request.channel, since=now - RATE_WINDOW
        )
        recent = RecentUse(user_starts, channel_starts, self._ledger.spent(now.astimezone(UTC).date()))
        decision = decide(request, settings=self.settings, workspaces=self._workspaces, recent=recent, now=now)
        match decision:
            case Allowed():
                self._ledger.record_start(user=request.user, channel=request.channel, at=now)
                return Admitted(request, now)
            case Refused():
                self._log_refusal(request, decision)
                return decision
            case _:
                assert_never(decision)

    def withdraw(self, admitted: Admitted) -> None:
        """An admitted run did not start after all (the store refused it, or could not be reached): its start
        no longer counts against the rate limits."""
        self._ledger.forget_start(user=admitted.request.user, channel=admitted.request.channel, at=admitted.at)

    def at_capacity(self, admitted: Admitted) -> Refused:
        """The run store refused an admitted run because every slot of `max_concurrent_runs` is held: withdrawn,
        logged, and the refusal to tell the person."""
        self.withdraw(admitted)
        refused = Refused(RefusalReason.CONCURRENT_RUNS, limit=self.settings.max_concurrent_runs)
        self._log_refusal(admitted.request, refused)
        return refused

    def _log_refusal(self, request: RunRequest, refused: Refused) -> None:
        log.warning(
            "run_refused",
            reason=str(refused.reason),
            user=request.user,
            channel=request.channel,
            teams=list(request.teams) if request.teams is not None else None,
            retry_at=refused.retry_at.isoformat() if refused.retry_at else None,
        )

    def observe(self, run: _Run, event: Event) -> None:
        """Count the run's spend so far (every step carries it) and its final spend."""
        match event:
            case StepCompleted(cost_usd=cost_usd):
                self._ledger.record_spend(run.run_id, cost_usd, self._clock())
            case RunFinished(result=result):
                self._ledger.record_spend(run.run_id, result.usage.cost_usd, self._clock(), final=True)
            case RunStarted() | StepStarted():
                pass
            case _:
                assert_never(event)


def _window_frees(starts: Sequence[datetime], limit: int | None) -> datetime | None:
    """When a slot frees up if `limit` starts or more are in the window (the oldest that must age out), else None."""
    if limit is None or len(starts) < limit:
        return None
    return starts[len(starts) - limit] + RATE_WINDOW
