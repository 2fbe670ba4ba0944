"""The API's wire shapes: what its requests carry and its answers hold, as typed models.

One definition for the REST answers, the MCP tools' structured content and the OpenAPI document (whose schemas are
made from these models). The verdict is `bot.verdict.Verdict` said as JSON: the same facts Slack, the terminal and
the viewer render.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from bot.api.settings import MAX_TASK_CHARS
from bot.gate.gate import GUIDANCE_CHARS
from bot.verdict_actions import ActionState


class InvestigationStatus(StrEnum):
    """Where an investigation is, for an API client."""

    RUNNING = "running"
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    """A side effect waits for a person's Approve or Deny in Slack."""
    FINISHED = "finished"
    """Ended with an answer: the verdict has it."""
    FAILED = "failed"
    """Ended without an answer (a budget, the model, a tool, OpsAgent itself): the verdict says why."""
    STOPPED = "stopped"
    """Someone stopped it."""


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class InvestigateBody(_Shape):
    """`POST /v1/investigations`: what to investigate, and where to post the run."""

    task: str = Field(min_length=1, max_length=MAX_TASK_CHARS)
    """What to investigate, as a person would ask it in the channel."""
    channel: str | None = Field(default=None, pattern=r"^[CG][A-Z0-9]{2,30}$")
    """The Slack channel (C…) to post the run in; absent: `[api] channel`, else no channel."""


class GuidanceBody(_Shape):
    """`POST /v1/investigations/{run_id}/guidance`: what the running investigation should know."""

    text: str = Field(min_length=1, max_length=GUIDANCE_CHARS)


class Started(_Shape):
    """An investigation that has started."""

    run_id: str
    status: InvestigationStatus
    url: str | None
    """The trace viewer's signed link to the run's page; null without `[viewer]`."""
    thread: str | None
    """The Slack permalink of the run's thread; null for a run posted in no channel (or an unknown workspace)."""


class Refusal(_Shape):
    """Why a side effect did not run: who refused its approval (an approver, whoever stopped the run, `opsagent` for
    an expiry or for a run no person could approve), when, and their reason."""

    by: str
    at: datetime | None
    reason: str


class Step(_Shape):
    """One step of the run in a line: what was called and what came of it."""

    index: int
    status: str = Field(description="ok, failed, waiting, denied, prose or unusable")
    tool: str
    call: str
    """The call in a few words (`query_metrics order-service 5xx`)."""
    outcome: str
    line: str
    """The step as one line of text (`3 ✓ query_metrics order-service · 5xx jumped to 12%`)."""
    refusal: Refusal | None = None
    """For a side effect that did not run: why (status `denied`)."""


class Claim(_Shape):
    """A claim of the answer (evidence, a ruled-out hypothesis, a sentence of a prose answer) as the evidence gate
    checked it."""

    text: str
    steps: list[int]
    """The steps it cites; when `matched`, the steps whose output shows it."""
    supported: bool
    problem: str
    matched: bool
    """It cites no step: the gate found what it says in the output of `steps`."""


class Verification(_Shape):
    """A check of an approved action made after it ran: did the symptom it was for go away?"""

    step: int
    """The action's step."""
    check: int
    """1 for the first check, 2 for the second ("is it still holding?")."""
    at: datetime
    outcome: str
    """`held`, `did_not_hold`, `inconclusive` or `not_verified` (there was no symptom to read again)."""
    metric: str
    before: str
    """The symptom's value when the action ran."""
    now: str
    """Its value at the check."""
    baseline: str
    """Its range before the incident began."""
    line: str
    """The check in a line, as every surface says it."""


class Action(_Shape):
    """A side effect the run proposed, and what came of it."""

    step: int
    call: str
    approved_by: str
    """Who approved it; "" when nobody did."""
    ok: bool
    """It ran and succeeded (`state` is `done`)."""
    outcome: str
    state: ActionState
    """What came of it: done or failed once approved and run; denied by a person; expired (nobody decided in time);
    a dry run (the `dry_run` policy); refused (the policy, no approver, an approval for other arguments); waiting for
    its approval; not run because the run stopped or failed while it waited."""
    said: str
    """What came of it in a line, for people: "denied by U0BOB at 19:16 UTC: not during peak traffic"."""
    verified: Verification | None
    """Its latest check, once one was made (minutes after the run ended)."""


class Guidance(_Shape):
    """What someone told the run while it ran, and the step it came before."""

    by: str
    text: str
    at: datetime
    before_step: int


class Usage(_Shape):
    """What the run took."""

    steps: int
    """The run's step count, as every surface shows it (tool calls, not the answer)."""
    prompt_tokens: int
    completion_tokens: int
    tokens_estimated: bool
    cost_usd: float
    elapsed_s: float


class Verdict(_Shape):
    """What the run came to: the typed verdict every surface renders."""

    title: str
    """In a few words: "Root cause found", "Likely cause", "Stopped: the deadline passed"."""
    ok: bool
    stop_reason: str
    stop: str
    """How the run ended, in words ("Finished with an answer", "Stopped by U0ALICE")."""
    detail: str
    summary: str
    root_cause: str
    rest: str
    """What a prose answer says besides its summary, root cause, evidence, ruled-out hypotheses and next steps
    (Markdown); "" for typed findings."""
    confidence: str | None
    derived: bool
    """The model stated no confidence: `confidence` is the one the evidence gate derived."""
    confidence_words: str
    evidence: list[Claim]
    ruled_out: list[Claim]
    next_steps: list[str]
    actions: list[Action]
    claimed_not_taken: list[str]
    partial_answer: str
    hypothesis: str
    """The leading hypothesis the steps stated last; "" when none did."""
    guidance: list[Guidance]


class Investigation(_Shape):
    """An investigation an API client started: where it is, its steps, and its verdict once it has ended."""

    run_id: str
    status: InvestigationStatus
    task: str
    requested_by: str
    """The API client that started it (the token's name)."""
    created_at: datetime
    url: str | None
    thread: str | None
    steps: list[Step]
    usage: Usage
    verdict: Verdict | None
    """null while the run goes on."""


class InvestigationItem(_Shape):
    """One run in a client's list."""

    run_id: str
    status: InvestigationStatus
    task: str
    created_at: datetime
    url: str | None
    thread: str | None


class Investigations(_Shape):
    """The runs this client started, newest first."""

    investigations: list[InvestigationItem]


class GuidanceKept(_Shape):
    """Guidance kept for the run: it reaches the model with its next request."""

    run_id: str
    seq: int
    """Its number among the run's guidance."""


class Problem(_Shape):
    """Why a request did nothing, in words for the caller, and what to do."""

    ok: bool = False
    code: str
    """What went wrong, for programs: `unauthorized`, `not_found`, `invalid_json`, `invalid_request`,
    `task_too_long`, `body_too_large`, `rate_limited`, `at_capacity`, `channel_not_allowed`, `ended`…"""
    error: str
    retry_at: datetime | None = None
    """When trying again can work, when a limit says (also sent as `Retry-After`)."""
