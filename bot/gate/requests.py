"""What people and services ask of OpsAgent: one closed union, read off each payload at its door.

Every request names who asks (`Asker`) and where; references to runs are resolved at the door (the run's record,
or nothing), and every text from outside is redacted there. The gate admits or refuses a request by its kind;
the listeners route an admitted one with `match`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import assert_never

from bot.access.askers import Asker
from bot.access.refusals import Action
from bot.store.records import Rating, RunRecord


@dataclass(frozen=True, slots=True)
class Place:
    """Where a request was made: the channel, the thread, and the message that asked (a mention, a clicked
    message); `thread_ts` is "" for an alert, whose thread is opened after it is admitted."""

    channel: str
    thread_ts: str = ""
    message_ts: str = ""


class DraftKind(StrEnum):
    """What a person can ask to have drafted from an investigation."""

    POSTMORTEM = "postmortem"
    STATUS = "status"


class NoTaskReason(StrEnum):
    """Why a request asks for nothing the bot can do, though its asker may be answered."""

    EMPTY = "empty"
    """A mention with no task in it."""
    NOTHING_RUNNING = "nothing_running"
    """“@opsagent stop” in a thread whose investigation is not running."""
    RUN_ENDED = "run_ended"
    """A Stop button of a run that has ended (or that the bot does not know)."""
    UNREADABLE = "unreadable"
    """A click or submission the bot did not make (an unknown value, a run that does not exist)."""


@dataclass(frozen=True, slots=True)
class Investigate:
    """Start an investigation of `task` (a person's words, or an alert's fixed task); a follow-up when the thread's
    `earlier` run has ended."""

    asker: Asker
    place: Place
    task: str
    data: str = ""
    """What the task comes with from elsewhere (an alert's details), fenced as data for the model."""
    asked: str = ""
    """What the thread's header shows was asked; "" for `task`."""
    earlier: RunRecord | None = None
    labels: tuple[Mapping[str, str], ...] = field(default=())
    """The labels of each alert an alert-started run investigates."""


@dataclass(frozen=True, slots=True)
class Guidance:
    """A mention in the thread of a running investigation: something its asker wants the run to know."""

    asker: Asker
    place: Place
    run: RunRecord
    text: str


@dataclass(frozen=True, slots=True)
class StopRun:
    """Stop a running investigation (the Stop button, “@opsagent stop”, or a resolved alert)."""

    asker: Asker
    place: Place
    run: RunRecord


@dataclass(frozen=True, slots=True)
class AskDraft:
    """Have a draft made of the thread's latest investigation (`run`; None when the thread has none)."""

    asker: Asker
    place: Place
    kind: DraftKind
    run: RunRecord | None


@dataclass(frozen=True, slots=True)
class Decide:
    """Approve or deny the approval behind the clicked button (`place.message_ts` is the clicked message)."""

    asker: Asker
    place: Place
    approval_id: str
    approve: bool


@dataclass(frozen=True, slots=True)
class Rate:
    """A 👍/👎 on `run`'s verdict; a 👎 with a `trigger_id` opens the modal asking why."""

    asker: Asker
    place: Place
    run: RunRecord
    rating: Rating
    trigger_id: str = ""


@dataclass(frozen=True, slots=True)
class Explain:
    """Why a 👎: the reason typed in the modal the bot opened for it."""

    asker: Asker
    place: Place
    run: RunRecord
    reason: str


@dataclass(frozen=True, slots=True)
class NoTask:
    """A request the bot can do nothing with (`why`); its asker is answered if the gate admits them."""

    asker: Asker
    place: Place
    why: NoTaskReason


Request = Investigate | Guidance | StopRun | AskDraft | Decide | Rate | Explain | NoTask


def action_of(request: Request) -> Action:
    """What a request tries to do, as a refusal names it."""
    match request:
        case Investigate() | NoTask():
            return Action.START
        case Guidance():
            return Action.GUIDE
        case StopRun():
            return Action.STOP
        case AskDraft():
            return Action.DRAFT
        case Decide():
            return Action.APPROVE
        case Rate() | Explain():
            return Action.RATE
        case _:
            assert_never(request)
