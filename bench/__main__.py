"""`python -m bench [--quick]`: run our kernel and the reference baseline side by side and report the ratios.

Prints Markdown tables (for the README) and writes `bench/results/latest.json`; `--quick` is a smoke run of seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from typing import Any

from bench import (
    chaos,
    grounding_bench,
    parsing_bench,
    regex_bench,
    replica_bench,
    report,
    slack_bench,
    suites,
    token_bench,
)

QUICK = {
    "overhead_reps": 3,
    "runs": 50,
    "concurrency_reps": 1,
    "seeds": 20,
    "slack_seconds": 2,
    "replica_runs": 20,
    "replica_reps": 1,
    "parse_reps": 5,
    "parallel_reps": 1,
    "regex_length": 1_000,
}
FULL = {
    "overhead_reps": 30,
    "runs": 200,
    "concurrency_reps": 3,
    "seeds": 200,
    "slack_seconds": 10,
    "replica_runs": replica_bench.RUNS,
    "replica_reps": replica_bench.REPS,
    "parse_reps": 31,
    "parallel_reps": 5,
    "regex_length": regex_bench.LENGTH,
}


async def run_all(cfg: dict[str, int], only: set[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    if "a" in only:
        results["overhead"] = await suites.overhead((20, 50, 100), cfg["overhead_reps"])
    if "b" in only:
        results["concurrency"] = await suites.concurrency(cfg["runs"], 10, 0.05, cfg["concurrency_reps"])
    if "c" in only:
        results["chaos"] = await chaos.chaos(cfg["seeds"])
    if "d" in only:
        results["tokens"] = await suites.prompt_tokens()
    if "t" in only:
        results["token_suite"] = await token_bench.tokens_by_configuration()
    if "e" in only:
        results["parallel"] = await suites.parallel_reads(cfg["parallel_reps"])
    if "s" in only:
        results["slack"] = await slack_bench.slack(cfg["slack_seconds"])
    if "r" in only:
        results["replicas"] = await replica_bench.replicas(cfg["replica_runs"], cfg["replica_reps"])
    if "p" in only:
        results["parsing"] = parsing_bench.parsing(cfg["parse_reps"])
    if "x" in only:
        results["regexes"] = regex_bench.regexes(cfg["regex_length"])
    if "g" in only:
        results["grounding"] = grounding_bench.grounding()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    parser.add_argument("--only", default="abcdtesrpxg", help="suites to run, e.g. 'ad' (default: all)")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    results = asyncio.run(run_all(QUICK if args.quick else FULL, set(args.only)))
    results["machine"] = {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "mode": "quick" if args.quick else "full",
        "total_s": time.perf_counter() - began,
    }
    print(report.markdown(results, (("grounding", grounding_bench.markdown),)))
    path = report.save(results)
    print(f"Results written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
