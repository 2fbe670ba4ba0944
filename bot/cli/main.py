"""The `opsagent` command line: demo, investigate, replay, stats, eval, tools list/call, check.

Every command that runs the agent consumes the kernel's event stream, as the Slack bot does, and
`tools call` goes through the very dispatch the agent uses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path

from bot.agent import build_agent, build_llm, require_llm
from bot.audit.trail import AuditTrail
from bot.cli.demo import run_demo
from bot.cli.eval_report import render_report as render_eval_report
from bot.cli.replay import render_report, replay_trace
from bot.cli.stats import collect_stats, render_stats
from bot.cli.terminal import render_event
from bot.cli.terminal_approval import TerminalApprover
from bot.eval.run import run_evaluation, scripted_model
from bot.eval.scenarios import load_scenarios
from bot.eval.tools import catalogue_names
from bot.serve import serve_slack
from bot.settings import Settings, load_settings
from bot.slack.settings import SlackSecrets
from bot.store.factory import opened_store
from bot.store.journal import StoreActionJournal
from bot.store.protocol import SchemaVersionError, StoreUnavailableError
from bot.telemetry.log_setup import configure_logging
from kernel import (
    DEFAULT_REDACTOR,
    Agent,
    CallContext,
    ConfirmHook,
    Dispatcher,
    RunControl,
    RunFinished,
    RunResult,
    ToolCall,
    ToolRegistry,
    load_trace,
)
from opsagent_tools.toolset import build_tools, check_backends

TRACE_DIR = Path("traces")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `opsagent` console script; returns the process exit code."""
    args = _parser().parse_args(argv)
    configure_logging(json=args.command == "serve")
    try:
        return asyncio.run(args.handler(args))
    except (ValueError, StoreUnavailableError, SchemaVersionError) as exc:  # say what to fix, no traceback
        print(f"opsagent: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opsagent", description="OpsAgent: an incident-response agent.")
    parser.add_argument(
        "--config", type=Path, help="the configuration file (default: $OPSAGENT_CONFIG, ./opsagent.toml)"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo", help="investigate the built-in demo incident, offline unless a model is configured"
    )
    demo.add_argument("--trace", type=Path, help="where to save the trace (default: traces/<run id>.json)")
    demo.set_defaults(handler=_demo)

    investigate = commands.add_parser("investigate", help="investigate TASK with the configured model and tools")
    investigate.add_argument("task")
    investigate.add_argument("--trace", type=Path, help="where to save the trace (default: traces/<run id>.json)")
    investigate.set_defaults(handler=_investigate)

    replay = commands.add_parser(
        "replay", help="re-run a trace's recorded model turns on today's kernel and tools (side effects dry-run)"
    )
    replay.add_argument("trace", type=Path, help="the trace file to replay")
    replay.add_argument("--json", action="store_true", help="print the comparison as JSON")
    replay.set_defaults(handler=_replay)

    stats = commands.add_parser("stats", help="summarise every trace under DIR: success, steps, tokens, tool errors")
    stats.add_argument("directory", type=Path, metavar="DIR")
    stats.add_argument("--json", action="store_true", help="print the summary as JSON")
    stats.set_defaults(handler=_stats)

    evaluate = commands.add_parser(
        "eval", help="score the agent on scenarios with recorded tool outputs (side effects always dry-run)"
    )
    evaluate.add_argument("scenarios", type=Path, metavar="SCENARIOS", help="a scenario file or a directory of them")
    evaluate.add_argument(
        "--scripted", action="store_true", help="play each scenario's scripted turns instead of the configured model"
    )
    evaluate.add_argument(
        "--min-score", type=float, default=1.0, help="pass when every level scores at least this (0..1, default 1)"
    )
    evaluate.add_argument("--json", action="store_true", help="print the report as JSON")
    evaluate.add_argument("--traces", type=Path, help="also save each run's trace in this directory")
    evaluate.set_defaults(handler=_eval)

    tools = commands.add_parser("tools", help="list the configured tools, or call one through the agent's dispatch")
    tool_commands = tools.add_subparsers(dest="tools_command", required=True)
    listing = tool_commands.add_parser("list", help="the registered tools and their argument schemas")
    listing.add_argument("--json", action="store_true", help="print the specs as JSON")
    listing.set_defaults(handler=_tools_list)
    call = tool_commands.add_parser("call", help="run one tool and print the observation the model would see")
    call.add_argument("name")
    call.add_argument("--args", default="{}", help="the arguments as a JSON object")
    call.set_defaults(handler=_tools_call)

    check = commands.add_parser("check", help="validate the configuration and reach each backend")
    check.set_defaults(handler=_check)

    serve = commands.add_parser("serve", help="run the Slack bot (Socket Mode by default)")
    serve.add_argument("--http", action="store_true", help="serve POST /slack/events over HTTP instead of Socket Mode")
    serve.add_argument("--host", default="0.0.0.0", help="the HTTP server's address (default 0.0.0.0)")
    serve.add_argument(
        "--port", type=int, default=3000, help="the HTTP server's port, in both modes for /healthz (default 3000)"
    )
    serve.set_defaults(handler=_serve)
    return parser


async def _demo(args: argparse.Namespace) -> int:
    result = await run_demo(build_llm(_settings(args).llm), print_line=_print)
    return _finish(result, args.trace)


async def _investigate(args: argparse.Namespace) -> int:
    settings = _settings(args)
    agent = build_agent(
        settings,
        llm=require_llm(settings, instead="run `opsagent demo`, which runs offline without one"),
        tools=build_tools(settings.tools),
        confirm=TerminalApprover(),
    )
    result: RunResult | None = None
    async for event in agent.events(args.task):
        _print(render_event(event))
        if isinstance(event, RunFinished):
            result = event.result
    assert result is not None  # the loop always ends with RunFinished
    return _finish(result, args.trace)


async def _replay(args: argparse.Namespace) -> int:
    trace = load_trace(args.trace)
    report = await replay_trace(trace, _settings(args))
    print(json.dumps(report.to_dict(), indent=2) if args.json else render_report(report))
    return 1 if report.divergent else 0


async def _stats(args: argparse.Namespace) -> int:
    summary = collect_stats(args.directory, warn=lambda line: print(line, file=sys.stderr))
    print(json.dumps(summary.to_dict(), indent=2) if args.json else render_stats(summary))
    return 0


async def _eval(args: argparse.Namespace) -> int:
    scenarios = load_scenarios(args.scenarios, catalogue_names())
    settings = _settings(args)
    llm = None if args.scripted else require_llm(settings, instead="pass --scripted to play the scenarios' scripts")
    report = await run_evaluation(
        scenarios,
        lambda scenario: llm or scripted_model(scenario),
        settings=settings,
        min_score=args.min_score,
        on_outcome=lambda o: print(f"· {o.scenario.name}: {'pass' if o.passed else 'FAIL'}", file=sys.stderr),
    )
    if args.traces is not None:
        args.traces.mkdir(parents=True, exist_ok=True)
        for outcome in report.outcomes:
            (args.traces / f"{outcome.scenario.name}.json").write_text(outcome.result.to_json(), encoding="utf-8")
    print(json.dumps(report.to_dict(), indent=2) if args.json else render_eval_report(report))
    return 1 if report.failed else 0


async def _tools_list(args: argparse.Namespace) -> int:
    registry = build_tools(_settings(args).tools)
    if args.json:
        print(json.dumps([tool.spec.model_dump() for tool in registry], indent=2))
    elif not len(registry):
        print("no tools are configured: add [tools.metrics], [tools.logs], [tools.repos] or [tools.actions]")
    else:
        print(_render_tools(registry))
    return 0


async def _tools_call(args: argparse.Namespace) -> int:
    settings = _settings(args)
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f'--args is not valid JSON ({exc}); pass an object such as \'{{"service": "order"}}\''
        ) from exc
    if not isinstance(arguments, dict):
        raise ValueError("--args must be a JSON object")
    dispatcher = Dispatcher(
        build_tools(settings.tools),
        policy=settings.policy,
        confirm=TerminalApprover(),
        redactor=DEFAULT_REDACTOR,
        control=RunControl(),
    )
    call = ToolCall(name=args.name, args=arguments)
    outcome = await dispatcher.dispatch(call, CallContext(run_id=f"cli-{uuid.uuid4().hex[:8]}", step=1, call=call))
    print(outcome.text)
    return 1 if outcome.error else 0


async def _check(args: argparse.Namespace) -> int:
    settings = _settings(args)
    results = await check_backends(settings.tools)
    llm = build_llm(settings.llm)
    print(f"✓ model: {llm.model}" if llm else "· model: none configured (the demo still runs offline)")
    print(f"✓ policy: side effects {settings.policy.mode}")
    if not results:
        print("· no backends configured")
    for result in results:
        print(f"{'✓' if result.ok else '✗'} {result.name}: {result.message}")
    return 0 if all(result.ok for result in results) else 1


async def _serve(args: argparse.Namespace) -> int:
    settings = _settings(args)
    llm = require_llm(settings)
    async with opened_store(settings.store.url) as store:
        tools = build_tools(settings.tools, journal=StoreActionJournal(store, AuditTrail(store)))

        def agent_for(confirm: ConfirmHook) -> Agent:
            return build_agent(settings, llm=llm, tools=tools, confirm=confirm)

        secrets = SlackSecrets.from_env()
        await serve_slack(
            settings, secrets, agent_for, tools=tools, store=store, http=args.http, host=args.host, port=args.port
        )
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(args.config)


def _render_tools(registry: ToolRegistry) -> str:
    blocks = []
    for tool in registry:
        flags = " [side effect: needs approval]" if tool.side_effect else ""
        schema = json.dumps(tool.spec.parameters.get("properties", {}), indent=2)
        blocks.append(f"{tool.name}{flags}\n  {tool.spec.description}\n  arguments: {schema}")
    return "\n\n".join(blocks)


def _print(text: str) -> None:
    if text:
        print(text, flush=True)


def _finish(result: RunResult, trace: Path | None) -> int:
    path = trace or TRACE_DIR / f"{result.run_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.to_json(), encoding="utf-8")
    print(f"trace saved: {path}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
