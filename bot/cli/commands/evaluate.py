"""`opsagent eval SCENARIOS`: score the agent on scenarios with recorded tool outputs; and `opsagent eval export
--feedback DIR`: the run store's rated runs written as scenarios."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent eval` (with `eval export`)."""
    evaluate = commands.add(
        "eval", "score the agent on scenarios with recorded tool outputs (side effects always dry-run)", _run
    )
    evaluate.add_argument(
        "scenarios",
        type=Path,
        metavar="SCENARIOS",
        help="a scenario file or a directory of them; or `export` with --feedback DIR",
    )
    evaluate.add_argument(
        "--feedback",
        type=Path,
        metavar="DIR",
        help="with `export`: write the run store's rated runs as scenario files in DIR",
    )
    evaluate.add_argument(
        "--scripted", action="store_true", help="play each scenario's scripted turns instead of the configured model"
    )
    evaluate.add_argument(
        "--min-score", type=float, default=1.0, help="pass when every level scores at least this (0..1, default 1)"
    )
    evaluate.add_argument("--json", action="store_true", help="print the report as JSON")
    evaluate.add_argument("--traces", type=Path, help="also save each run's trace in this directory")


async def _run(args: argparse.Namespace, terminal: Terminal) -> int:
    if args.feedback is not None or str(args.scenarios) == "export":
        return await _export(args, terminal)
    from bot.agent import require_llm
    from bot.cli.eval_report import render_report
    from bot.eval.run import run_evaluation, scripted_model
    from bot.eval.scenarios import load_scenarios
    from bot.eval.tools import catalogue_names

    scenarios = load_scenarios(args.scenarios, catalogue_names())
    settings = settings_of(args)
    llm = None if args.scripted else require_llm(settings, instead="pass --scripted to play the scenarios' scripts")
    report = await run_evaluation(
        scenarios,
        lambda scenario: llm or scripted_model(scenario),
        settings=settings,
        min_score=args.min_score,
        on_outcome=lambda o: terminal.progress(f"· {o.scenario.name}: {'pass' if o.passed else 'FAIL'}"),
    )
    if args.traces is not None:
        args.traces.mkdir(parents=True, exist_ok=True)
        for outcome in report.outcomes:
            (args.traces / f"{outcome.scenario.name}.json").write_text(outcome.result.to_json(), encoding="utf-8")
    if args.json:
        terminal.data(json.dumps(report.to_dict(), indent=2))
    else:
        terminal.report(render_report(report))
    return 1 if report.failed else 0


async def _export(args: argparse.Namespace, terminal: Terminal) -> int:
    """The rated runs as scenario files; exit 1 when a run's file could not be written (the others are), 0 when
    every rated run was exported or cannot be a scenario (each says why)."""
    from bot.cli.stored import existing_store
    from bot.eval.export import rated_scenarios, write_scenarios
    from bot.eval.tools import catalogue_names

    if str(args.scenarios) != "export" or args.feedback is None:
        raise ValueError("to export rated runs as scenarios, run: opsagent eval export --feedback DIR")
    with terminal.working("reading the rated runs…"):
        async with existing_store(settings_of(args)) as store:
            texts, left_out = await rated_scenarios(store.feedback, store.runs, catalogue_names())
    written, not_written = write_scenarios(texts, args.feedback, catalogue_names())
    left_out += not_written
    for run in left_out:
        terminal.warn(f"{'failed' if run.failed else 'skipped'} {run.run_id}: {run.why}")
    rated = len(written) + len(left_out)
    failed = sum(run.failed for run in left_out)
    skipped = f"; {len(left_out) - failed} skipped" if len(left_out) > failed else ""
    not_done = f"; {failed} failed (see above)" if failed else ""
    terminal.success(
        f"exported {len(written)} of {rated} rated run{'s' if rated != 1 else ''} as scenarios in {args.feedback}"
        f"{skipped}{not_done}"
    )
    for path in written:
        terminal.say(f"  {path}")
    return 1 if failed else 0
