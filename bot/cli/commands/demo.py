"""`opsagent demo`: investigate the built-in demo incident, offline unless a model is asked for."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent demo`."""
    demo = commands.add("demo", "investigate the built-in demo incident, offline (a scripted model) unless asked", _run)
    demo.add_argument("--trace", type=Path, help="where to save the trace (default: traces/<run id>.json)")
    demo.add_argument("--keep", type=Path, metavar="DIR", help="keep the backends and an opsagent.toml in DIR")
    demo.add_argument(
        "--model-from-config", action="store_true", help="run on the configured model instead of the scripted one"
    )


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.agent import NO_MODEL, build_llm
    from bot.cli.demo import run_demo
    from bot.cli.session import exit_code, save_trace

    llm = build_llm(settings_of(args).llm) if args.model_from_config else None
    if args.model_from_config and llm is None:
        raise ValueError(f"--model-from-config: {NO_MODEL}")
    result = await run_demo(llm, terminal=terminal, keep=args.keep)
    save_trace(result, args.trace, terminal, directory=args.keep / "traces" if args.keep else Path("traces"))
    if args.keep:
        config = args.keep / "opsagent.toml"
        terminal.say(f"kept the demo's backends in {args.keep}; try:", style="bold")
        for line in (
            f'opsagent --config {config} tools call search_logs --args \'{{"service": "gateway"}}\'',
            f"opsagent --config {config} investigate --scripted",
            f"opsagent --config {config} replay {args.keep / 'traces' / f'{result.run_id}.json'}",
            f"opsagent stats {args.keep / 'traces'}",
        ):
            terminal.say(f"  {line}")
    return exit_code(result)
