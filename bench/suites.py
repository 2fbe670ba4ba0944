"""Suites (a) kernel overhead per step, (b) concurrency, (d) prompt tokens and (e) parallel reads; (c) chaos lives in
`bench.chaos`.

Each suite runs ours and the baseline on the same scripted work and returns a plain dict for the report.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any

from bench import baseline
from bench.models import PlaybackModel, playback_llm, probe_script
from bench.pager import PagerModel
from bench.workloads import (
    ANSWER,
    INVESTIGATION,
    baseline_ops_tools,
    baseline_probe_tools,
    expected_output,
    investigation_turns,
    ours_ops_tools,
    ours_probe_tools,
)
from kernel import Agent, Budget, FinishedBy, ScriptedModel, ToolRegistry, estimate_tokens, native_turn

TASK = "checkout 5xx rate jumped to 12% at 10:41; find the root cause"
HIGH = {"max_prompt_tokens": 10**9, "max_seconds": 3600.0}


@cache
def _ours_tools(output: str | None) -> ToolRegistry:
    """Shared across runs, as in a deployment: tool specs are built once, not inside the timed runs."""
    return ours_probe_tools(output)


@cache
def _base_tools(output: str | None) -> baseline.ToolRegistry:
    return baseline_probe_tools(output)


def _ours(
    turns: list[str], steps: int, *, latency: float = 0.0, output: str | None = None
) -> Callable[[], Awaitable[Any]]:
    agent = Agent(
        llm=PlaybackModel(turns, latency=latency),
        tools=_ours_tools(output),
        budget=Budget(max_steps=steps + 1, **HIGH),
        salvage=False,
    )
    return lambda: agent.run(TASK)


def _base(
    turns: list[str], steps: int, *, latency: float = 0.0, output: str | None = None
) -> Callable[[], Awaitable[Any]]:
    tools = _base_tools(output)
    budget = baseline.Budget(max_steps=steps + 1, **HIGH)
    llm = playback_llm(turns, latency=latency)
    return lambda: baseline.react(TASK, tools, budget=budget, llm=llm)


def _check(result: Any, steps: int) -> None:
    if not result.ok or len(result.steps) != steps + 1:
        raise AssertionError(
            f"a benchmark run did not finish as scripted: {result.stop_reason}, {len(result.steps)} steps"
        )


KERNELS = {"ours": _ours, "baseline": _base}
RATIO_TARGET = 1.0
"""CPU per step against the reference design's, with all our safety work kept."""
MEMORY_TARGET_KIB = 20_000 / 1024
"""20 KB of peak memory per in-flight run."""
WALL_TARGET = 1.15
"""200 concurrent runs' wall time against the ideal (every model call back to back, no kernel time)."""


async def overhead(sizes: tuple[int, ...], reps: int) -> dict[str, Any]:
    """(a) CPU time per model turn with an instant model and tool; median over `reps`, kernels interleaved."""
    samples: dict[str, dict[int, list[float]]] = {k: {n: [] for n in sizes} for k in KERNELS}
    for rep in range(reps + 1):
        for n in sizes:
            order = list(KERNELS) if rep % 2 else list(reversed(KERNELS))
            for kernel in order:
                run = KERNELS[kernel](probe_script(n), n)
                gc.collect()
                began = time.process_time()
                result = await run()
                cpu = time.process_time() - began
                _check(result, n)
                if rep:  # the first round warms up imports, caches and the allocator
                    samples[kernel][n].append(cpu / (n + 1) * 1e6)
    rows = []
    for n in sizes:
        ours, base = statistics.median(samples["ours"][n]), statistics.median(samples["baseline"][n])
        rows.append({"steps": n, "ours_us": ours, "baseline_us": base, "ratio": ours / base})
    scaling = rows[-1]["ours_us"] / rows[0]["ours_us"]
    return {
        "reps": reps,
        "rows": rows,
        "ratio_target": RATIO_TARGET,
        "ratio_pass": all(r["ratio"] <= RATIO_TARGET for r in rows),
        "scaling": scaling,
        "scaling_sizes": (sizes[0], sizes[-1]),
        "scaling_target": 1.05,
        "scaling_pass": scaling <= 1.05,
    }


CONCURRENCY_OUTPUT = "\n".join(
    f"2024-05-14T10:41:{s:02d}Z WARN checkout [http.server] upstream slow route=/api/v2/checkout dur={900 + 37 * s}ms"
    for s in range(12)
)
"""About 1 KB: a typical small observation."""


async def concurrency(runs: int, steps: int, latency: float, reps: int) -> dict[str, Any]:
    """(b) `runs` concurrent runs of `steps` steps with `latency` per model call: wall time and peak memory per run."""
    ideal = (steps + 1) * latency
    turns = probe_script(steps)
    out: dict[str, Any] = {"runs": runs, "steps": steps, "latency_s": latency, "ideal_s": ideal, "reps": reps}
    for kernel, make in KERNELS.items():
        walls, cpus = [], []
        for _ in range(reps):
            factories = [make(turns, steps, latency=latency, output=CONCURRENCY_OUTPUT) for _ in range(runs)]
            gc.collect()
            began, cpu = time.perf_counter(), time.process_time()
            results = await asyncio.gather(*(f() for f in factories))
            walls.append(time.perf_counter() - began)
            cpus.append((time.process_time() - cpu) / (runs * (steps + 1)) * 1e6)
            for result in results:
                _check(result, steps)
        factories = [make(turns, steps, latency=latency, output=CONCURRENCY_OUTPUT) for _ in range(runs)]
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        results = await asyncio.gather(*(f() for f in factories))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del results
        wall = statistics.median(walls)
        out[kernel] = {
            "wall_s": wall,
            "walls_s": walls,
            "wall_ratio": wall / ideal,
            "cpu_us_per_turn": statistics.median(cpus),
            "peak_kib_per_run": (peak - before) / runs / 1024,
        }
    out["wall_target"] = WALL_TARGET
    out["wall_pass"] = out["ours"]["wall_ratio"] <= WALL_TARGET
    out["memory_target_kib"] = MEMORY_TARGET_KIB
    out["memory_pass"] = out["ours"]["peak_kib_per_run"] <= MEMORY_TARGET_KIB
    return out


READ_S = 0.3
"""How long each of the parallel suite's reads takes."""
PARALLEL_TARGET = 1.1
"""A turn of reads run at once may take this much longer than its slowest read."""


async def parallel_reads(reps: int) -> dict[str, Any]:
    """(e) Three 300 ms reads as one model turn (run at once) against the same reads one turn each (one at a time,
    as the one-tool-per-step instructions had it): the run's wall time with an instant model, median of `reps`."""
    tools = ToolRegistry()

    @tools.register
    async def read(name: str) -> str:
        """Read one thing, slowly."""
        await asyncio.sleep(READ_S)
        return f"contents of {name}"

    calls = [("read", {"name": name}) for name in "abc"]
    finish = native_turn(("finish", {"answer": "read all three"}), start_id=9)
    scripts = {
        "parallel": [native_turn(*calls), finish],
        "sequential": [*(native_turn(call, start_id=i) for i, call in enumerate(calls)), finish],
    }
    walls: dict[str, list[float]] = {shape: [] for shape in scripts}
    for _ in range(reps):
        for shape, script in scripts.items():
            agent = Agent(llm=ScriptedModel(script, record=False), tools=tools, salvage=False)
            began = time.perf_counter()
            result = await agent.run(TASK)
            walls[shape].append(time.perf_counter() - began)
            if not result.ok or [s.error for s in result.steps] != [None] * 4:
                raise AssertionError(f"the parallel-read run did not go as scripted: {result.stop_reason}")
    parallel, sequential = statistics.median(walls["parallel"]), statistics.median(walls["sequential"])
    ratio = parallel / READ_S
    return {
        "reps": reps,
        "read_s": READ_S,
        "parallel_s": parallel,
        "sequential_s": sequential,
        "ratio": ratio,
        "sequential_ratio": sequential / READ_S,
        "target": PARALLEL_TARGET,
        "pass": ratio <= PARALLEL_TARGET,
    }


def _sent_tokens(model: ScriptedModel) -> tuple[int, int]:
    """What the model was sent, counted independently: (chars/4 over the whole request, per-piece estimate)."""
    chars, pieces = 0, 0
    for request in model.requests:
        specs = json.dumps([t.model_dump() for t in request.tools])
        parts = [request.instructions, specs]
        for message in request.messages:
            parts.append(message.content)
            parts.extend(call.render() for call in message.tool_calls)
        chars += sum(len(p) for p in parts)
        pieces += sum(estimate_tokens(p) for p in parts)
    return chars // 4, pieces


async def prompt_tokens() -> dict[str, Any]:
    """(d) Prompt tokens of a 20-step investigation with 2-8 KB outputs, and reachability of every cut output."""
    turns = investigation_turns()
    model = ScriptedModel(turns)
    result = await Agent(llm=model, tools=ours_ops_tools(), budget=Budget(max_steps=len(turns)), salvage=False).run(
        TASK
    )
    model.assert_complete()
    _check(result, len(INVESTIGATION))
    sent_chars, sent_pieces = _sent_tokens(model)

    prompts: list[int] = []
    turn_iter = iter(turns)

    async def base_llm(prompt: str) -> str:
        prompts.append(len(prompt))
        return next(turn_iter)

    base = await baseline.react(TASK, baseline_ops_tools(), budget=baseline.Budget(max_steps=len(turns)), llm=base_llm)
    _check(base, len(INVESTIGATION))

    expected = [expected_output(name, args) for name, args in INVESTIGATION]
    final = model.requests[-1].messages
    truncated = [s.index for s in result.steps[:-1] if "…[truncated" in s.observation]
    elided = [i + 1 for i in range(len(expected)) if any(f"[step {i + 1} output elided" in m.content for m in final)]
    trace_ok = [result.full_output(s) == text for s, text in zip(result.steps, expected, strict=False)]
    pager = await _page_everything(turns, expected)
    ours_tokens = result.usage.prompt_tokens
    return {
        "steps": len(INVESTIGATION),
        "output_kib": [round(len(t) / 1024, 1) for t in expected],
        "ours_tokens": ours_tokens,
        "ours_sent_chars_div4": sent_chars,
        "ours_sent_estimate": sent_pieces,
        "ours_count_matches": sent_pieces == ours_tokens,
        "baseline_tokens": base.usage.prompt_tokens,
        "baseline_sent_chars_div4": sum(prompts) // 4,
        "ratio": ours_tokens / base.usage.prompt_tokens,
        "target": 0.6,
        "pass": ours_tokens / base.usage.prompt_tokens <= 0.6,
        "truncated_steps": truncated,
        "elided_steps": elided,
        "trace_recoverable": sum(trace_ok),
        "pager": pager,
        "reachable_pass": all(trace_ok) and pager["recovered"] == len(expected),
        "prose_ending": await prose_ending(turns),
    }


async def prose_ending(turns: list[str]) -> dict[str, Any]:
    """(d) What a prose ending costs: the investigation ended by `finish`, and by a prose answer that the kernel's
    reminder makes the model confirm (the same prose again), in turns and tokens per run."""
    ends = {FinishedBy.FINISH: turns, FinishedBy.PROSE: [*turns[:-1], ANSWER, ANSWER]}
    spent: dict[str, dict[str, int]] = {}
    for how, script in ends.items():
        model = ScriptedModel(script, record=False)
        result = await Agent(
            llm=model, tools=ours_ops_tools(), budget=Budget(max_steps=len(script)), salvage=False
        ).run(TASK)
        model.assert_complete()
        if result.finished_by is not how:
            raise AssertionError(f"the {how} ending did not finish as scripted: {result.stop_reason}")
        usage = result.usage
        spent[how] = {"turns": usage.turns, "prompt_tokens": usage.prompt_tokens, "completion": usage.completion_tokens}
    finish, prose = spent[FinishedBy.FINISH], spent[FinishedBy.PROSE]
    return {
        **{f"{how}_{key}": value for how, counts in spent.items() for key, value in counts.items()},
        "extra_turns": prose["turns"] - finish["turns"],
        "extra_prompt_tokens": prose["prompt_tokens"] - finish["prompt_tokens"],
        "extra_pct": 100 * (prose["prompt_tokens"] - finish["prompt_tokens"]) / finish["prompt_tokens"],
    }


async def _page_everything(turns: list[str], expected: list[str]) -> dict[str, Any]:
    """Replay the investigation, then page every step's output back through `read_output`, as a model would."""
    model = PagerModel(turns[:-1], [f"o{i + 1}" for i in range(len(expected))])
    agent = Agent(llm=model, tools=ours_ops_tools(), budget=Budget(max_steps=400, **HIGH), salvage=False)
    result = await agent.run(TASK)
    recovered = sum(model.recovered.get(f"o{i + 1}") == text for i, text in enumerate(expected))
    return {
        "ok": result.ok,
        "stop_reason": str(result.stop_reason),
        "read_output_calls": model.reads,
        "pages_cut_by_truncation": model.cut_pages,
        "recovered": recovered,
        "problems": model.problems[:5],
    }
