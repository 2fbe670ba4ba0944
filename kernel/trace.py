"""The run's trace: every step with its thought, call, observation, timing and tokens, and the result.

Serialised traces carry a `schema_version`; older versions are migrated when loaded, so a trace
stays a readable record, a resume checkpoint and a replay fixture for as long as we keep it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, computed_field
from pydantic.dataclasses import dataclass

from kernel.answer import (
    ActionTaken,
    EvidenceCheck,
    Findings,
    FinishedBy,
    Hypothesis,
    actions_taken,
    check_evidence,
    conclude_prose,
)
from kernel.budget import Usage
from kernel.calls import ToolCall
from kernel.guidance import TakenGuidance
from kernel.llm import LLMResponse
from kernel.stop import StopReason
from kernel.tool_errors import ErrorKind
from kernel.tool_output import SourceLink
from kernel.verification import Verification

SCHEMA_VERSION = 3
"""Bump on any incompatible change, and add the step up from the old version to `MIGRATIONS`."""


@dataclass(slots=True)
class ApprovalRecord:
    """The human decision on a side-effect step, or that it is still pending."""

    decision: Literal["approved", "denied", "pending"]
    by: str = ""
    at: datetime | None = None
    reason: str = ""
    approval_id: str = ""


@dataclasses.dataclass(slots=True)
class Step:
    """One tool call (or one unusable model turn) and what came of it.

    A plain dataclass with slots: a run keeps every step, so each must be small and cheap to make (the kernel
    builds it from values it already checked); it is validated when a trace is loaded (`RunResult` types it).
    """

    index: int
    """1-based position in the run."""
    turn: int
    """0-based index of the model turn in `RunResult.turns` that asked for this step."""
    thought: str = ""
    call: ToolCall | None = None
    """None when the model's turn held no usable action."""
    observation: str = ""
    """Exactly what the model was shown (truncated, redacted), before fencing."""
    error: ErrorKind | None = None
    said: str = ""
    """For a failed step: what went wrong, in words for people (`StepError.said`); every surface shows this, never
    the observation's hint. Empty in traces written before it was kept (version 3 without it)."""
    hint: str = ""
    """For a failed step: what the model was told to do next (`StepError.hint`), kept for the record; the
    observation holds it too, and no surface shows it."""
    ms: float = 0.0
    prompt_tokens: int = 0
    """Prompt tokens of the model turn that produced this step."""
    completion_tokens: int = 0
    approval: ApprovalRecord | None = None
    hypothesis: Hypothesis | None = None
    """The working hypothesis the thought stated (a `Hypothesis: … (likely)` line), if any."""
    headline: str = ""
    """The outcome in one line for people, when the tool gave one (`ToolOutput.headline`)."""
    links: tuple[SourceLink, ...] = ()
    """Where a person sees this observation at its source (`ToolOutput.links`)."""
    side_effect: bool = False
    """The call named a tool with side effects, run or not (one asked for past the step budget reached no gate and
    nobody). False in traces written before it was kept: there a side effect shows only by its approval, a policy
    refusal or a dry run."""

    @property
    def ok(self) -> bool:
        """Whether the step succeeded."""
        return self.error is None

    @property
    def said_for_people(self) -> str:
        """What a person reads of a failed step: its `said`; the observation only for a trace written before
        `said` was kept."""
        return self.said or self.observation

    @property
    def prose(self) -> bool:
        """A reply in prose, with no call, that reads as an answer: the kernel asked the model to confirm it
        (the observation is that reminder). Such a step is not counted against the step budget."""
        return self.call is None and self.error is None

    @property
    def pending(self) -> bool:
        """Whether the step waits for a human decision."""
        return self.approval is not None and self.approval.decision == "pending"


class RunResult(BaseModel):
    """The outcome of a run and its full trace. `ok` is true only for `finish`; failure is explicit."""

    model_config = ConfigDict(ser_json_inf_nan="constants")
    """Model-made arguments may hold NaN or Infinity (lenient parsing); they must survive a round-trip."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    task: str
    task_data: str = ""
    """What the task came with from elsewhere (an alert's labels, an earlier answer): the model saw it fenced as data."""
    model: str = ""
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    stop_reason: StopReason
    answer: str | None = None
    """The final answer in Markdown; set only when the run finished (rendered from `findings` when the
    model sent only typed fields)."""
    findings: Findings | None = None
    """The structured final answer; set only when the run finished."""
    evidence_check: EvidenceCheck | None = None
    """The findings checked against the steps (`kernel.answer.evidence`); set with `findings`."""
    finished_by: FinishedBy | None = None
    """How the run finished: a `finish` call or an accepted prose answer; None until it finished."""
    partial_answer: str | None = None
    """On failure: the model's last word on what it knows and could not check. Not an answer."""
    detail: str = ""
    """A human-readable account of why the run stopped."""
    steps: list[Step] = Field(default_factory=list)
    turns: list[LLMResponse] = Field(default_factory=list)
    """Every model response, in order: what replay feeds back to the kernel."""
    offered: list[tuple[str, ...]] = Field(default_factory=list)
    """The tools whose schemas each turn's request carried in full, by turn (version 3; the others were in
    `load_tools`' index). Empty in a trace from before tools were deferred: every tool was offered."""
    usage: Usage = Field(default_factory=Usage)
    outputs: dict[str, str] = Field(default_factory=dict)
    """Full outputs behind handles, for steps whose observation was truncated."""
    nonce: str = ""
    """The data-fence nonce the model was told about; a resumed run keeps it."""
    guidance: list[TakenGuidance] = Field(default_factory=list)
    """What people told the run while it ran, and where it took each (version 3)."""
    verifications: list[Verification] = Field(default_factory=list)
    """The checks of its approved actions, made after they ran, in the order they were made (version 3)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        """True only when the model finished with an answer."""
        return self.stop_reason is StopReason.FINISH

    def actions_taken(self) -> tuple[ActionTaken, ...]:
        """The approved side effects that ran, from the steps (never from what the model says)."""
        return actions_taken(self.steps)

    @property
    def leading_hypothesis(self) -> Hypothesis | None:
        """The latest working hypothesis a step stated, if any."""
        return next((s.hypothesis for s in reversed(self.steps) if s.hypothesis is not None), None)

    def verified(self, verification: Verification) -> RunResult:
        """A copy with `verification` recorded, in place of an earlier record of the same step and check (so
        recording one twice, as a retry does, keeps one)."""
        kept = [v for v in self.verifications if (v.step, v.check) != (verification.step, verification.check)]
        return self.model_copy(update={"verifications": [*kept, verification]})

    def pending_steps(self) -> list[Step]:
        """Steps that wait for an approval decision (when `stop_reason` is `awaiting_approval`)."""
        return [s for s in self.steps if s.pending]

    def full_output(self, step: Step) -> str:
        """A step's complete output: the kept full text if it was truncated, else the observation."""
        return self.outputs.get(f"o{step.index}", step.observation)

    def to_json(self, *, indent: int | None = 2) -> str:
        """Serialise the trace (with `schema_version`) as JSON."""
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> RunResult:
        """Load a trace written by this or any earlier schema version."""
        return cls.model_validate(migrate(json.loads(text)))


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 added the structured answer: a finished v1 run (always by a `finish` call) gets its findings
    mapped from its answer, and their evidence check."""
    if data.get("stop_reason") != StopReason.FINISH or not isinstance(data.get("answer"), str):
        return data
    conclusion = conclude_prose(data["answer"])
    steps = _STEPS.validate_python(data.get("steps", []))
    check = check_evidence(conclusion.findings, steps, conclusion.answer)
    return data | {
        "finished_by": FinishedBy.FINISH.value,
        "findings": conclusion.findings.model_dump(mode="json"),
        "evidence_check": check.model_dump(mode="json"),
    }


_STEPS = TypeAdapter(list[Step])


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 added the guidance people give a running investigation and the checks of approved actions: a
    version-2 run had neither."""
    return data | {"guidance": [], "verifications": []}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3}
"""`MIGRATIONS[n]` turns a version-n trace dict into a version-n+1 one."""


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a trace dict up to `SCHEMA_VERSION`, refusing versions from the future."""
    version = data.get("schema_version")
    if not isinstance(version, int):
        raise ValueError("not an OpsAgent trace: it has no integer schema_version")
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"trace schema_version {version} is newer than this OpsAgent understands ({SCHEMA_VERSION}); upgrade OpsAgent"
        )
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
        data["schema_version"] = version
    data.pop("ok", None)
    return data


def load_trace(path: Path) -> RunResult:
    """Read a trace file of any schema version; anything else is a ValueError that names the file."""
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return RunResult.from_json(text)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(map(str, problem["loc"])) or "(trace)"
        raise ValueError(f"{path} is not an OpsAgent trace: {where}: {problem['msg']}") from exc
    except AttributeError as exc:  # `migrate` reads the top level as an object
        raise ValueError(f"{path} is not an OpsAgent trace: it is not a JSON object") from exc
    except Exception as exc:  # invalid JSON, no schema_version, a schema from the future: all mean "not a trace"
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0].removeprefix("not an OpsAgent trace: ")
        raise ValueError(f"{path} is not an OpsAgent trace: {reason}") from exc
