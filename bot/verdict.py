"""One model of a run's result for every surface: the verdict (summary, root cause, gated confidence, evidence with
its steps, what was ruled out, next steps, every side effect it proposed) and each step's line, built once from a
`RunResult`.

Plain facts, never mrkdwn nor HTML: Slack, the terminal and the trace viewer each escape, link and lay them out. The
facts several surfaces show are defined here once: a run's step count (`tool_steps`), its stop's title
(`Verdict.stop`, from `bot.words.stop_title`), a refused approval (`Refusal`) and the side effects with their outcome
(`Action`, from `bot.verdict_actions`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import assert_never

from bot.evidence import Claim, answer_evidence
from bot.verdict_actions import (
    CUT_SHORT,
    OUTCOME_CHARS,
    Action,
    Refusal,
    actions_of,
    by_hand,
    call_words,
    one_line,
    refusal_of,
)
from bot.words import StopTitle, duration, stop_title
from kernel import (
    FINISH_TOOL,
    ApprovalRecord,
    Confidence,
    ErrorKind,
    Hypothesis,
    RunResult,
    SourceLink,
    Step,
    StopReason,
    TakenGuidance,
    Usage,
)

THOUGHT_CHARS = 120
"""A step's thought in one line is cut to this."""


class StepStatus(StrEnum):
    """What became of a step, as each surface marks it (✓, ✗, ⏳…)."""

    OK = "ok"
    FAILED = "failed"
    WAITING = "waiting"
    """A side effect waiting for a person's approval."""
    DENIED = "denied"
    """A side effect a person (or the expiry) denied: it did not run."""
    PROSE = "prose"
    """The model answered in prose; it was asked to confirm."""
    UNUSABLE = "unusable"
    """The model's reply held no usable action."""


def counts_as_step(step: Step) -> bool:
    """Whether `step` counts in a run's step count for people: a call of a tool other than `finish`, whatever came of
    it (done, failed, refused, waiting for approval).

    Not counted: a reply without a usable call (a format error), a prose reply the model was asked to confirm, the
    `finish` call (the answer, not a step), and a call the kernel did not run because the run was ending (`not_run`).
    The step budget (`Usage.steps`) counts otherwise, as it limits the model: it spends a step on an unusable reply
    and on the `finish` too, and waits until a pending approval is decided."""
    return step.call is not None and step.call.name != FINISH_TOOL and step.error is not ErrorKind.NOT_RUN


def tool_steps(steps: Iterable[Step]) -> int:
    """A run's step count, as every surface shows it (Slack, the terminal, the viewer, `stats`, eval reports, drafts,
    logs): its steps that `counts_as_step`."""
    return sum(1 for step in steps if counts_as_step(step))


@dataclass(frozen=True, slots=True)
class StepLine:
    """One step in a line: its status, the call in a few words, the outcome, the thought, where to see it."""

    index: int
    status: StepStatus
    tool: str
    """The tool's name; "" for a prose or unusable reply."""
    call: str
    """The call in a few words ("search_logs gateway 15m"); what the model did, for a prose or unusable reply."""
    outcome: str
    """The tool's headline, else a short excerpt of the observation (a failure's reason for a failed step)."""
    thought: str
    """The thought in one line (its hypothesis line left out: surfaces show the hypothesis on its own)."""
    links: tuple[SourceLink, ...]
    approval: ApprovalRecord | None
    refusal: Refusal | None
    """Why a side effect did not run, when its approval was refused (its `outcome` says the same in plain words)."""
    ms: float


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a run came to, for people: built once by `verdict_of`, rendered by every surface."""

    run_id: str
    task: str
    ok: bool
    stop_reason: StopReason
    detail: str
    """Why the run stopped, in the trace's words ("" when it finished)."""
    summary: str
    root_cause: str
    """"" when it only repeats the summary."""
    rest: str
    """What a prose answer (or `finish` with only `answer`) says besides its summary, root cause, evidence, ruled-out
    hypotheses and next steps, as written (Markdown): surfaces show it after the evidence, as a paragraph. "" for
    typed findings."""
    confidence: Confidence | None
    """The stated confidence as the evidence gate capped it, or the one it derived (`derived`)."""
    lowered_because: str
    """Why the gate lowered the stated confidence; "" when it did not."""
    derived: bool
    """The model stated no confidence: the gate derived `confidence` from how many claims the steps show."""
    derived_because: str
    """How ("3 of 4 claims grounded in the steps, the root cause among them"); "" when not derived."""
    evidence: tuple[Claim, ...]
    """The evidence items, then the answer's other sentences the gate found in the steps' output."""
    ruled_out: tuple[Claim, ...]
    next_steps: tuple[str, ...]
    actions: tuple[Action, ...]
    """Every side effect the run proposed, in step order, with what came of it (`bot.verdict_actions`)."""
    claimed_not_taken: tuple[str, ...]
    """Sentences of the answer that claim an action ("rolled back checkout") no approved step took."""
    partial_answer: str
    """A run that did not finish: the model's last word on what it knew. Not an answer."""
    hypothesis: Hypothesis | None
    """The leading hypothesis the steps stated last: what was known, for a run that ended without an answer."""
    steps: tuple[StepLine, ...]
    """Every step but the `finish` itself."""
    tool_steps: int
    """The run's step count (`tool_steps`): what every surface says the run took."""
    stopped_by: str
    """Who stopped the run, when the surface knows (a Slack user id); "" otherwise."""
    usage: Usage
    guidance: tuple[TakenGuidance, ...] = ()
    """What people told the run while it ran, each with the step it came before: what shaped it."""

    @property
    def by_hand(self) -> tuple[Action, ...]:
        """The side effects it proposed that did not happen: next steps a person may take by hand
        (`Action.by_hand` words each), after the answer's own."""
        return by_hand(self.actions)

    @property
    def stop(self) -> StopTitle:
        """The title of the run's end ("Stopped: the deadline passed", "Stopped by" someone), for every surface."""
        return stop_title(self.stop_reason, by=self.stopped_by if self.stop_reason is StopReason.CANCELLED else "")

    @property
    def title(self) -> str:
        """The verdict in a few words: "Root cause found", "Likely cause", "Stopped: the deadline passed", "Stopped by
        a user" (naming nobody: a surface that can name who stopped the run says `stop` its way)."""
        if not self.ok:
            return stop_title(self.stop_reason).said()
        match self.confidence:
            case Confidence.CONFIRMED:
                return "Root cause found"
            case Confidence.LIKELY:
                return "Likely cause"
            case Confidence.INCONCLUSIVE:
                return "Inconclusive"
            case None:
                return "Answered"
            case _:
                assert_never(self.confidence)

    @property
    def level(self) -> str:
        """The confidence in a word or two: "confirmed", "likely (derived)"; "" when there is none."""
        if self.confidence is None:
            return ""
        return f"{self.confidence.value} (derived)" if self.derived else self.confidence.value

    @property
    def confidence_words(self) -> str:
        """The `level` and what the gate said of it: how it lowered the stated level ("lowered from confirmed to likely:
        1 of 3 evidence claims is unsupported") or derived one ("likely (derived): 3 of 4 claims grounded in the steps,
        the root cause among them"); "" when there is none."""
        if self.derived and self.derived_because:
            return f"{self.level}: {self.derived_because}"
        return self.lowered_because or self.level


def verdict_of(result: RunResult, *, stopped_by: str = "") -> Verdict:
    """The verdict of a run: the same facts for Slack, the terminal and the viewer. `stopped_by`: who stopped it, when
    the surface knows (Slack does; the trace says it only in its `detail`)."""
    findings = result.findings if result.ok else None
    check = result.evidence_check if result.ok else None
    lines = {step.index: step_line(step) for step in result.steps}
    shown = (
        answer_evidence(findings, check, result.answer or "", lambda i: lines[i].links if i in lines else ())
        if findings is not None and check is not None
        else None
    )
    actions = actions_of(result.steps, result.stop_reason, result.verifications)
    return Verdict(
        run_id=result.run_id,
        task=result.task,
        ok=result.ok,
        stop_reason=result.stop_reason,
        detail=result.detail.strip(),
        summary=findings.summary if findings else "",
        root_cause=findings.root_cause if findings and findings.root_cause != findings.summary else "",
        rest=shown.rest if shown else "",
        confidence=check.confidence if check else None,
        lowered_because=check.lowered_because if check else "",
        derived=check.derived if check else False,
        derived_because=check.derived_because if check else "",
        evidence=shown.evidence if shown else (),
        ruled_out=shown.ruled_out if shown else (),
        next_steps=findings.next_steps if findings else (),
        actions=actions,
        claimed_not_taken=tuple(f"“{a.sentence}”" for a in check.unbacked_actions) if check else (),
        partial_answer="" if result.ok else (result.partial_answer or "").strip(),
        hypothesis=result.leading_hypothesis,
        steps=tuple(line for line in lines.values() if not _is_finish(line)),
        tool_steps=tool_steps(result.steps),
        stopped_by=stopped_by,
        usage=result.usage,
        guidance=tuple(result.guidance),
    )


def usage_facts(verdict: Verdict, *, priced: bool = False) -> list[str]:
    """What the run took: "6 steps" (`tool_steps`), "12.7k tokens" (≈ when estimated), "$0.0123" when priced,
    "41.0 s"."""
    usage, steps = verdict.usage, verdict.tool_steps
    tokens = usage.prompt_tokens + usage.completion_tokens
    shown = f"{tokens / 1000:.1f}k" if tokens >= 1000 else f"{tokens}"
    facts = [
        f"{steps} step{'' if steps == 1 else 's'}",
        f"{'≈' if usage.estimated_turns else ''}{shown} tokens",
    ]
    if priced and usage.cost_usd:
        facts.append(f"${usage.cost_usd:.4f}")
    facts.append(duration(usage.elapsed_s * 1000))
    return facts


PROSE_SAID = "answered in prose; asked to confirm"
"""A prose reply's step, for people: its observation is the kernel's reminder to the model, not theirs to read."""


def step_line(step: Step) -> StepLine:
    """One step of a trace as a line for people."""
    thought = one_line(_without_hypothesis(step.thought), THOUGHT_CHARS)
    if step.call is None:
        status = StepStatus.PROSE if step.prose else StepStatus.UNUSABLE
        what = PROSE_SAID if step.prose else "replied without a usable action"
        return StepLine(step.index, status, "", what, "", thought, (), None, None, step.ms)
    status = _status(step)
    outcome = step.headline if step.headline and status is StepStatus.OK else _excerpt(step)
    return StepLine(
        index=step.index,
        status=status,
        tool=step.call.name,
        call=call_words(step.call),
        outcome=one_line(outcome, OUTCOME_CHARS),
        thought=thought,
        links=step.links,
        approval=step.approval,
        refusal=refusal_of(step.approval),
        ms=step.ms,
    )


def _status(step: Step) -> StepStatus:
    if step.pending:
        return StepStatus.WAITING
    if step.error is ErrorKind.DENIED and step.approval is not None:
        return StepStatus.DENIED
    return StepStatus.FAILED if step.error is not None else StepStatus.OK


def _excerpt(step: Step) -> str:
    """The first line of the observation that says something, or of a failure's words for people (a step without
    a headline shows this)."""
    if step.pending:
        return "waiting for approval"
    if (refusal := refusal_of(step.approval)) is not None:
        return refusal.said()
    if step.error is ErrorKind.CANCELLED:  # the kernel's words for the model name the stop's detail, not a person
        return CUT_SHORT
    shown = step.said_for_people if step.error is not None else step.observation  # never the model's hint
    lines = (line.strip(" \t`#>-*") for line in shown.splitlines())
    return next((line for line in lines if line), "(no output)")


def _without_hypothesis(thought: str) -> str:
    return "\n".join(line for line in thought.splitlines() if "hypothesis" not in line.lower()[:40])


def _is_finish(line: StepLine) -> bool:
    """The successful `finish` step: its answer is the verdict, not a step."""
    return line.tool == FINISH_TOOL and line.status is StepStatus.OK
