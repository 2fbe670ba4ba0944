"""The `opsagent` command line: the offline demo, and the same demo against a real model.

Every subcommand consumes the kernel's event stream, as the Slack bot does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import structlog

from bot.demo import DEMO_TASK, demo_agent
from bot.terminal import render_event
from kernel import Agent, OpenAICompatibleLLM, RunFinished, RunResult


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `opsagent` console script; returns the process exit code."""
    parser = argparse.ArgumentParser(prog="opsagent", description="OpsAgent: an incident-response agent.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="investigate the built-in demo incident offline")
    demo.add_argument(
        "--live",
        action="store_true",
        help="use the model from OPSAGENT_LLM_BASE_URL / OPSAGENT_LLM_API_KEY / OPSAGENT_LLM_MODEL",
    )
    demo.add_argument("--trace", metavar="FILE", help="write the run's JSON trace to FILE")
    args = parser.parse_args(argv)
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    agent = demo_agent(OpenAICompatibleLLM.from_env() if args.live else None)
    result = asyncio.run(_stream(agent, DEMO_TASK))
    if args.trace:
        Path(args.trace).write_text(result.to_json(), encoding="utf-8")
    return 0 if result.ok else 1


async def _stream(agent: Agent, task: str) -> RunResult:
    """Print each event as it happens; return the final result."""
    async for event in agent.events(task):
        if text := render_event(event):
            print(text, flush=True)
        if isinstance(event, RunFinished):
            return event.result
    raise RuntimeError("the run ended without a RunFinished event")


if __name__ == "__main__":
    sys.exit(main())
