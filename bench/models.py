"""Deterministic models for both kernels: instant or latency playback of scripted turns, a chaos model, a stuck one.

Ours speak the kernel's `LLM` protocol (`ChatRequest -> LLMResponse`); the baseline's are `async (prompt) -> str`.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Awaitable, Callable, Sequence

from kernel import ChatRequest, LLMResponse, prepare_conversation, text_turn

BaselineLLM = Callable[[str], Awaitable[str]]

CHAOS_TOOL = "query_metrics"
CHAOS_SERVICE = "checkout"
CHAOS_CALLS = 8
FAULTS = ("prose", "truncated_json", "unknown_tool", "missing_arg", "repeat")
PROSE = "Let me think about which signal matters most here before choosing the next query."
SUCCESS = re.compile(r"RESULT step=(\d+) ")


def probe_script(steps: int) -> list[str]:
    """`steps` distinct calls of the instant `probe` tool, then finish (text protocol)."""
    turns = [text_turn("probe", f"Known: {i} probes done. Why: next probe.", i=i) for i in range(steps)]
    return [*turns, text_turn("finish", "Known: all probes done.", answer=f"{steps} probes done")]


class PlaybackModel:
    """Ours: plays back pre-built responses, optionally after a fixed latency; records nothing."""

    def __init__(self, turns: Sequence[str], *, latency: float = 0.0) -> None:
        self._turns = [LLMResponse(text=t, model="bench") for t in turns]
        self._latency = latency
        self._next = 0

    @property
    def model(self) -> str:
        return "bench"

    async def complete(self, request: ChatRequest) -> LLMResponse:
        prepare_conversation(request, native_tools=False)  # what every adapter does first (the baseline: its prompt)
        if self._latency:
            await asyncio.sleep(self._latency)
        turn = self._turns[self._next]
        self._next += 1
        return turn


def playback_llm(turns: Sequence[str], *, latency: float = 0.0) -> BaselineLLM:
    """Baseline: the same playback as `PlaybackModel`, as `async (prompt) -> str`."""
    queue = iter(list(turns))

    async def llm(prompt: str) -> str:
        if latency:
            await asyncio.sleep(latency)
        return next(queue)

    return llm


class ChaosBrain:
    """Must make `CHAOS_CALLS` distinct successful calls, then finish; with probability `p` per call it emits a fault.

    Progress is read from the last observation shown: a success of call k (`RESULT step=k`) advances it.
    Draw order per model call is fixed (one `random()`, then one `choice` on a fault) so the ceiling replays it.
    """

    def __init__(self, seed: int, p: float) -> None:
        self._rng = random.Random(f"model-{seed}")
        self._p = p
        self.done = 0
        self.calls = 0
        self._previous: str | None = None

    def next_text(self, last_observation: str) -> str:
        match = SUCCESS.search(last_observation)
        if match and int(match.group(1)) == self.done:
            self.done += 1
        self.calls += 1
        text = self._fault(self._rng.choice(FAULTS)) if self._rng.random() < self._p else self._correct()
        self._previous = text
        return text

    def _correct(self) -> str:
        if self.done >= CHAOS_CALLS:
            return text_turn("finish", "Known: all checks done.", answer=f"{CHAOS_CALLS} checks done")
        return text_turn(
            CHAOS_TOOL, f"Known: {self.done} checks. Why: check {self.done}.", service=CHAOS_SERVICE, step=self.done
        )

    def _fault(self, kind: str) -> str:
        step = min(self.done, CHAOS_CALLS - 1)
        match kind:
            case "prose":
                return PROSE
            case "truncated_json":
                block = json.dumps({"action": CHAOS_TOOL, "args": {"service": CHAOS_SERVICE, "step": step}})
                return f"Why: check {step}.\n```json\n{block[: len(block) // 2]}"
            case "unknown_tool":
                return text_turn(CHAOS_TOOL[:-1], f"Why: check {step}.", service=CHAOS_SERVICE, step=step)
            case "missing_arg":
                return text_turn(CHAOS_TOOL, f"Why: check {step}.", service=CHAOS_SERVICE)
            case _:
                return self._previous if self._previous is not None else PROSE


class ChaosModel:
    """Ours: a `ChaosBrain` reading the last message of the request."""

    def __init__(self, brain: ChaosBrain) -> None:
        self.brain = brain

    @property
    def model(self) -> str:
        return "chaos"

    async def complete(self, request: ChatRequest) -> LLMResponse:
        last = request.messages[-1].content if request.messages else ""
        return LLMResponse(text=self.brain.next_text(last), model="chaos")


def chaos_llm(brain: ChaosBrain) -> BaselineLLM:
    """Baseline: a `ChaosBrain` reading the last observation at the end of the prompt."""

    async def llm(prompt: str) -> str:
        last = prompt.rsplit("Observation: ", 1)[1] if "Observation: " in prompt else ""
        return brain.next_text(last)

    return llm


class ToolDice:
    """Whether each attempt of the chaos tool fails: its own seeded stream, shared by nobody else."""

    def __init__(self, seed: int, q: float) -> None:
        self._rng = random.Random(f"tool-{seed}")
        self._q = q
        self.attempts = 0

    def fails(self) -> bool:
        self.attempts += 1
        return self._rng.random() < self._q


def ceiling(seed: int, p: float, q: float, max_calls: int = 20) -> bool:
    """The ideal: each fault costs exactly one call and nothing else; only the call budget stops it."""
    model, dice, done = random.Random(f"model-{seed}"), ToolDice(seed, q), 0
    for _ in range(max_calls):
        if model.random() < p:
            model.choice(FAULTS)
            continue
        if done >= CHAOS_CALLS:
            return True
        if not dice.fails():
            done += 1
    return False


STUCK_TURN = text_turn(CHAOS_TOOL, "Why: the metrics will show it.", service=CHAOS_SERVICE, step=0)


class StuckModel:
    """Ours: makes the same call forever."""

    calls = 0

    @property
    def model(self) -> str:
        return "stuck"

    async def complete(self, request: ChatRequest) -> LLMResponse:
        self.calls += 1
        return LLMResponse(text=STUCK_TURN, model="stuck")


def stuck_llm(counter: list[int]) -> BaselineLLM:
    """Baseline: the same call forever; `counter[0]` counts the calls."""

    async def llm(prompt: str) -> str:
        counter[0] += 1
        return STUCK_TURN

    return llm
