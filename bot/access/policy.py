"""How much work for the model may start: channels, rate limits, concurrency, daily spend.

`decide` is the one pure decision (given the clock and what the ledger counted); `AccessPolicy` feeds it,
records the requests it admits, and follows every run's spend through the kernel's events. Who asks is
`bot.access.identity`'s question, asked first by the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Protocol, assert_never

from bot.access.ledger import InMemoryRunLedger, RunLedger
from bot.access.refusals import AccessRefused, Action, RefusalReason
from bot.access.settings import AccessSettings
from kernel import Event, GuidanceTaken, RunFinished, RunStarted, StepCompleted, StepStarted

RATE_WINDOW = timedelta(hours=1)
"""The sliding window of the per-user and per-channel limits."""


@dataclass(frozen=True)
class Allowed:
    """The request may go on."""


AccessDecision = Allowed | AccessRefused


@dataclass(frozen=True)
class RunRequest:
    """Something that starts work for the model (a run or a draft), as the limits count it."""

    user: str
    """Who asked, as the ledger counts them: a Slack user id, or a service's name (`alertmanager`)."""
    channel: str
    """Where it posts; "" for a run that posts in no channel (an API run without one): no channel rule applies."""
    per_user: bool = True
    """Whether the per-user limit applies: False for a service, which authenticates on its own."""
    action: Action = Action.START


@dataclass(frozen=True)
class Counted:
    """`AccessPolicy.admit` let `request` go on, counted as started `at` until withdrawn (it did not start)."""

    request: RunRequest
    at: datetime


@dataclass(frozen=True)
class RecentUse:
    """What the ledger counted, as `decide` needs it."""

    user_starts: Sequence[datetime]
    """Start times of the user's runs within `RATE_WINDOW`, oldest first."""
    channel_starts: Sequence[datetime]
    spent_today_usd: float


def decide(request: RunRequest, *, settings: AccessSettings, recent: RecentUse, now: datetime) -> AccessDecision:
    """Whether `request` may start work for the model now: the channel allowlist, then the spend cap, then the
    rate limits. Who asks was checked before (`bot.access.identity`): limits are no business of outsiders."""
    action = request.action
    if settings.allowed_channels and request.channel and request.channel not in settings.allowed_channels:
        return AccessRefused(RefusalReason.CHANNEL, action, channels=tuple(settings.allowed_channels))
    if settings.daily_spend_usd is not None and recent.spent_today_usd >= settings.daily_spend_usd:
        reset = datetime.combine(now.astimezone(UTC).date() + timedelta(days=1), time(), UTC)
        return AccessRefused(
            RefusalReason.DAILY_SPEND,
            action,
            retry_at=reset,
            limit=settings.daily_spend_usd,
            used=recent.spent_today_usd,
        )
    per_user = settings.runs_per_user_per_hour if request.per_user else None
    if (retry := _window_frees(recent.user_starts, per_user)) is not None:
        return AccessRefused(
            RefusalReason.USER_RATE, action, retry_at=retry, limit=per_user, used=len(recent.user_starts)
        )
    per_channel = settings.runs_per_channel_per_hour if request.channel else None
    if (retry := _window_frees(recent.channel_starts, per_channel)) is not None:
        return AccessRefused(
            RefusalReason.CHANNEL_RATE, action, retry_at=retry, limit=per_channel, used=len(recent.channel_starts)
        )
    return Allowed()


class _Run(Protocol):
    """What the policy needs of a run it follows (an `ActiveRun` of the run service)."""

    run_id: str


class AccessPolicy:
    """Admits or refuses work for the model by `decide`, counting what it admits and every run's spend in a ledger.

    A `RunObserver`: it reads each run's usage from `StepCompleted` and `RunFinished` (in-flight spend counts).
    """

    def __init__(
        self,
        settings: AccessSettings,
        *,
        ledger: RunLedger | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.settings = settings
        self._ledger: RunLedger = ledger or InMemoryRunLedger()
        self._clock = clock

    def now(self) -> datetime:
        """The time by the policy's clock (the one its limits count by)."""
        return self._clock()

    def admit(self, request: RunRequest) -> Counted | AccessRefused:
        """Decide on `request`; an admitted one is counted at once (no await in between, so simultaneous
        requests cannot all pass one check).

        The concurrency cap is the run store's to decide, when the run is stored (`at_capacity`)."""
        now = self._clock()
        user_starts, channel_starts = self._ledger.starts_since(
            user=request.user, channel=request.channel, since=now - RATE_WINDOW
        )
        recent = RecentUse(user_starts, channel_starts, self._ledger.spent(now.astimezone(UTC).date()))
        decision = decide(request, settings=self.settings, recent=recent, now=now)
        match decision:
            case Allowed():
                self._ledger.record_start(user=request.user, channel=request.channel, at=now)
                return Counted(request, now)
            case AccessRefused():
                return decision
            case _:
                assert_never(decision)

    def withdraw(self, counted: Counted) -> None:
        """Admitted work did not start after all (the store refused it, or could not be reached): its start
        no longer counts against the rate limits."""
        self._ledger.forget_start(user=counted.request.user, channel=counted.request.channel, at=counted.at)

    def at_capacity(self, counted: Counted) -> AccessRefused:
        """The run store refused an admitted run because every slot of `max_concurrent_runs` is held: withdrawn,
        and the refusal to tell the person."""
        self.withdraw(counted)
        return AccessRefused(
            RefusalReason.CONCURRENT_RUNS, counted.request.action, limit=self.settings.max_concurrent_runs
        )

    def observe(self, run: _Run, event: Event) -> None:
        """Count the run's spend so far (every step carries it) and its final spend."""
        match event:
            case StepCompleted(cost_usd=cost_usd):
                self._ledger.record_spend(run.run_id, cost_usd, self._clock())
            case RunFinished(result=result):
                self._ledger.record_spend(run.run_id, result.usage.cost_usd, self._clock(), final=True)
            case RunStarted() | GuidanceTaken() | StepStarted():
                pass
            case _:
                assert_never(event)


def _window_frees(starts: Sequence[datetime], limit: int | None) -> datetime | None:
    """When a slot frees up if `limit` starts or more are in the window (the oldest that must age out), else None."""
    if limit is None or len(starts) < limit:
        return None
    return starts[len(starts) - limit] + RATE_WINDOW
