"""Suite (c): completion under model faults and flaky tools, against the ideal ceiling, plus a stuck model.

Runs are paired: for one seed, both kernels see the same fault draws per model call and the same failure draws per tool attempt.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench import baseline
from bench.models import (
    CHAOS_CALLS,
    ChaosBrain,
    ChaosModel,
    StuckModel,
    ToolDice,
    ceiling,
    chaos_llm,
    stuck_llm,
)
from bench.workloads import baseline_chaos_tools, ours_chaos_tools
from kernel import Agent, Budget

TASK = "checkout p99 latency doubled; run the standard eight checks"
MAX_CALLS = 20
SETTINGS = ((0.1, 0.0), (0.2, 0.1), (0.3, 0.2))


async def _ours(seed: int, p: float, q: float) -> tuple[bool, str]:
    brain, dice = ChaosBrain(seed, p), ToolDice(seed, q)
    agent = Agent(
        llm=ChaosModel(brain), tools=ours_chaos_tools(dice), budget=Budget(max_steps=MAX_CALLS), salvage=False
    )
    result = await agent.run(TASK)
    return result.ok and brain.done == CHAOS_CALLS, str(result.stop_reason)


async def _base(seed: int, p: float, q: float) -> tuple[bool, str]:
    brain, dice = ChaosBrain(seed, p), ToolDice(seed, q)
    budget = baseline.Budget(max_steps=MAX_CALLS, max_consecutive_errors=3)
    result = await baseline.react(TASK, baseline_chaos_tools(dice), budget=budget, llm=chaos_llm(brain))
    return result.ok and brain.done == CHAOS_CALLS, result.stop_reason


async def chaos(seeds: int) -> dict[str, Any]:
    """Completion rates for each (p, q) over `seeds` paired runs, the ceiling, and escaped exceptions."""
    rows, escaped = [], 0
    for p, q in SETTINGS:
        done = {"ours": 0, "baseline": 0, "ceiling": 0}
        stops: dict[str, Counter[str]] = {"ours": Counter(), "baseline": Counter()}
        only_ours = only_base = 0
        for seed in range(seeds):
            outcome = {}
            for kernel, run in (("ours", _ours), ("baseline", _base)):
                try:
                    ok, stop = await run(seed, p, q)
                except Exception as exc:  # counted, never hidden: the target is zero
                    escaped += 1
                    ok, stop = False, f"raised {type(exc).__name__}"
                outcome[kernel] = ok
                done[kernel] += ok
                stops[kernel][stop] += 1
            done["ceiling"] += ceiling(seed, p, q, MAX_CALLS)
            only_ours += outcome["ours"] and not outcome["baseline"]
            only_base += outcome["baseline"] and not outcome["ours"]
        rates = {k: 100 * v / seeds for k, v in done.items()}
        rows.append(
            {
                "p": p,
                "q": q,
                **{f"{k}_pct": v for k, v in rates.items()},
                "pass": rates["ours"] >= rates["ceiling"] - 1,
                "only_ours": only_ours,
                "only_baseline": only_base,
                "ours_stops": dict(stops["ours"].most_common()),
                "baseline_stops": dict(stops["baseline"].most_common()),
            }
        )
    return {"seeds": seeds, "max_calls": MAX_CALLS, "rows": rows, "stuck": await stuck(), "escaped": escaped}


async def stuck() -> dict[str, Any]:
    """A model that repeats one failing call forever: how many calls each kernel allows, and why it stops."""
    always = ToolDice(0, 1.0)
    model = StuckModel()
    result = await Agent(
        llm=model, tools=ours_chaos_tools(always), budget=Budget(max_steps=MAX_CALLS), salvage=False
    ).run(TASK)
    counter = [0]
    budget = baseline.Budget(max_steps=MAX_CALLS, max_consecutive_errors=3)
    base = await baseline.react(TASK, baseline_chaos_tools(ToolDice(0, 1.0)), budget=budget, llm=stuck_llm(counter))
    return {
        "ours_calls": model.calls,
        "ours_stop": str(result.stop_reason),
        "baseline_calls": counter[0],
        "baseline_stop": base.stop_reason,
        "max_calls": MAX_CALLS,
        "pass": model.calls <= MAX_CALLS // 2,
    }
