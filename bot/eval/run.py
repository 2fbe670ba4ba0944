"""`opsagent eval`: run scenarios through the real kernel on recorded tool outputs, and score each run.

The model is the scenario's scripted investigation (CI plumbing) or any configured model; side effects
are always dry runs (the real tool handlers are not even present), so an evaluation never acts on the world.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from bot.agent import build_agent
from bot.eval.memory import scenario_memory
from bot.eval.scenarios import Scenario
from bot.eval.scoring import Level, Scores, score_run
from bot.eval.tools import recorded_registry
from bot.settings import Settings
from bot.store.records import utc_now
from bot.verdict import tool_steps
from kernel import (
    LLM,
    LLMError,
    LLMErrorKind,
    RunResult,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    text_turn,
)
from opsagent_tools.runbooks.briefing import runbooks_note
from opsagent_tools.runbooks.library import RunbookLibrary, TextSource

EVAL_POLICY = SideEffectPolicy(mode=SideEffectMode.DRY_RUN)
"""Whatever the configuration says, an evaluation's side effects only report what they would do."""


def script_turns(scenario: Scenario) -> list[str]:
    """The scenario's scripted investigation as text-protocol model turns (a thought and one JSON action)."""
    return [text_turn(turn.tool, turn.thought, **turn.args) for turn in scenario.script]


def scripted_model(scenario: Scenario) -> ScriptedModel:
    """A strict scripted model playing the scenario's script; a run that asks for more turns ends with
    `llm_error` (a failed path, reported) instead of crashing the whole evaluation."""
    exhausted = LLMError(
        LLMErrorKind.BAD_REQUEST, f"scenario {scenario.name}: the script has no turn {len(scenario.script) + 1}"
    )
    return ScriptedModel([*script_turns(scenario), exhausted], model="scripted")


@dataclass(frozen=True)
class ScenarioOutcome:
    """One scenario's run and its scores."""

    scenario: Scenario
    result: RunResult
    scores: Scores
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        """The outcome as plain JSON-able data (the trace itself is left out: `opsagent eval --traces DIR` saves it)."""
        usage = self.result.usage
        return {
            "scenario": self.scenario.name,
            "title": self.scenario.title,
            "passed": self.passed,
            "scores": {str(level): score.score for level, score in self.scores.by_level().items()},
            "problems": self.scores.problems(),
            "steps": tool_steps(self.result.steps),
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "cost_usd": usage.cost_usd,
            "stop_reason": str(self.result.stop_reason),
            "run_id": self.result.run_id,
        }


@dataclass(frozen=True)
class EvalReport:
    """Every scenario's outcome, under one model and pass threshold."""

    model: str
    min_score: float
    outcomes: tuple[ScenarioOutcome, ...]

    @property
    def failed(self) -> list[ScenarioOutcome]:
        """The outcomes below the threshold at some level."""
        return [outcome for outcome in self.outcomes if not outcome.passed]

    def mean(self, level: Level) -> float:
        """The mean score of `level` over all scenarios."""
        scores = [outcome.scores.by_level()[level].score for outcome in self.outcomes]
        return sum(scores) / len(scores) if scores else 0.0

    def mean_prompt_tokens(self) -> float:
        """Prompt tokens per scenario, on average: what the catalogue and the observations cost a run."""
        return sum(o.result.usage.prompt_tokens for o in self.outcomes) / len(self.outcomes) if self.outcomes else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able data."""
        return {
            "model": self.model,
            "mean_prompt_tokens": round(self.mean_prompt_tokens()),
            "min_score": self.min_score,
            "side_effects": str(EVAL_POLICY.mode),
            "passed": len(self.outcomes) - len(self.failed),
            "failed": len(self.failed),
            "mean_scores": {str(level): self.mean(level) for level in Level},
            "scenarios": [outcome.to_dict() for outcome in self.outcomes],
        }


async def run_scenario(
    scenario: Scenario,
    llm: LLM,
    *,
    settings: Settings | None = None,
    min_score: float = 1.0,
) -> ScenarioOutcome:
    """Investigate the scenario's task with `llm` on its recordings, side effects dry-run, and score the run
    (budgets, context and prices from `settings`; None: the kernel's defaults)."""
    runbooks = RunbookLibrary(TextSource(scenario.runbooks)) if scenario.runbooks else None
    async with AsyncExitStack() as stack:
        memory = None
        if scenario.past_incidents:
            memory = await stack.enter_async_context(scenario_memory(scenario.past_incidents, now=utc_now()))
        tools = recorded_registry(
            scenario.recordings, scenario.repos, runbooks, mcp_tools=scenario.mcp_tools, memory=memory
        )
        # An unfinished run fails the path level whatever it could summarise: no salvage.
        agent = build_agent(settings, llm=llm, tools=tools, policy=EVAL_POLICY, salvage=False)
        note = await runbooks_note(runbooks, scenario.task)
        result = await agent.run(scenario.task, data="\n\n".join(part for part in (scenario.data, note) if part))
    scores = score_run(result, scenario.expect)
    return ScenarioOutcome(scenario, result, scores, scores.passed(min_score))


async def run_evaluation(
    scenarios: Sequence[Scenario],
    model_for: Callable[[Scenario], LLM],
    *,
    settings: Settings | None = None,
    min_score: float = 1.0,
    on_outcome: Callable[[ScenarioOutcome], None] = lambda _: None,
) -> EvalReport:
    """Run every scenario in turn, each with the model `model_for` gives it; `on_outcome` sees each as it ends."""
    if not 0.0 <= min_score <= 1.0:
        raise ValueError(f"--min-score must be between 0 and 1, got {min_score}")
    outcomes, model = [], ""
    for scenario in scenarios:
        llm = model_for(scenario)
        model = llm.model
        outcome = await run_scenario(scenario, llm, settings=settings, min_score=min_score)
        on_outcome(outcome)
        outcomes.append(outcome)
    return EvalReport(model=model, min_score=min_score, outcomes=tuple(outcomes))
