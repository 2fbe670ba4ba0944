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
    kept = demo.add_mutually_exclusive_group()
    kept.add_argument("--keep", type=Path, metavar="DIR", help="keep the backends and an opsagent.toml in DIR")
    kept.add_argument(
        "--serve-kubernetes",
        type=Path,
        metavar="DIR",
        help="instead of a run, serve the cluster kept in DIR (by --keep) until Ctrl-C, for its Kubernetes tools",
    )
    demo.add_argument(
        "--model-from-config", action="store_true", help="run on the configured model instead of the scripted one"
    )


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    from bot.agent import NO_MODEL, build_llm
    from bot.cli.demo import K8S_TRY, run_demo, serve_kept_cluster
    from bot.cli.session import exit_code, save_trace

    if args.serve_kubernetes:
        return await serve_kept_cluster(args.serve_kubernetes.absolute(), terminal)
    llm = build_llm(settings_of(args).llm) if args.model_from_config else None
    if args.model_from_config and llm is None:
        raise ValueError(f"--model-from-config: {NO_MODEL}")
    # The kept opsagent.toml names its files by absolute paths (a file:// URL has no relative form), and the
    # commands it suggests work from any directory.
    keep = args.keep.absolute() if args.keep else None
    result = await run_demo(llm, terminal=terminal, keep=keep)
    save_trace(result, args.trace, terminal, directory=keep / "traces" if keep else Path("traces"))
    if keep:
        config = keep / "opsagent.toml"
        terminal.say(f"kept the demo's backends in {keep}; try:", style="bold")
        for line in (
            f'opsagent --config {config} tools call search_logs --args \'{{"service": "gateway"}}\'',
            f"opsagent --config {config} investigate --scripted",
            f"opsagent --config {config} replay {keep / 'traces' / f'{result.run_id}.json'}",
            f"opsagent stats {keep / 'traces'}",
        ):
            terminal.say(f"  {line}")
        terminal.say(
            f"and its cluster, served by opsagent demo --serve-kubernetes {keep} (until Ctrl-C):", style="bold"
        )
        terminal.say(f"  {K8S_TRY.format(config=config)}")
    return exit_code(result)
