"""The `opsagent` command line: init, demo, investigate, replay, stats, eval, tools, memory, postmortem, check, serve.

Every command that runs the agent consumes the kernel's event stream, as the Slack bot does, and `tools call`
goes through the very dispatch the agent uses. Whatever goes wrong, a person gets one clear line, never a
traceback, and a non-zero exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import traceback
import uuid
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import structlog
from rich.text import Text

from bot.agent import NO_MODEL, build_agent, build_llm, opened_toolset, require_llm
from bot.cli import init
from bot.cli.check import run_check
from bot.cli.demo import DEMO_TASK, run_demo
from bot.cli.investigate import investigate
from bot.cli.replay import render_report, replay_trace
from bot.cli.session import INTERRUPTED_EXIT, exit_code, save_trace, warn_about_servers
from bot.cli.stats import collect_stats, render_stats
from bot.cli.store_commands import add_store_commands, eval_export
from bot.cli.terminal import TerminalView
from bot.cli.terminal_approval import TerminalApprover
from bot.settings import Settings, load_settings
from bot.store.protocol import SchemaVersionError, StoreUnavailableError
from bot.telemetry.log_setup import configure_logging
from kernel import (
    DEFAULT_REDACTOR,
    Agent,
    CallContext,
    ConfirmHook,
    Dispatcher,
    RunControl,
    Tool,
    ToolCall,
    ToolRegistry,
    load_trace,
)
from opsagent_tools.mcp import MCP_SEARCH_TOOL, McpToolEntry, printable_name

PERSON_FACING = (ValueError, OSError, StoreUnavailableError, SchemaVersionError)
"""Failures whose message says what to fix (Slack's, `SlackUnavailableError`, is an OSError): printed as they
are, exit 2."""
BROKEN_PIPE_EXIT = 141
"""As a process killed by SIGPIPE: the reader (`| head`) went away."""
DEBUG_ENV = "OPSAGENT_DEBUG"
log = structlog.get_logger("opsagent.cli")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `opsagent` console script; returns the process exit code."""
    args = _parser().parse_args(argv)
    configure_logging(json=args.command == "serve", file=getattr(args, "log_file", None))
    try:
        code = asyncio.run(args.handler(args))
        sys.stdout.flush()  # inside the try: a reader that went away fails here, not at exit
        return code
    except KeyboardInterrupt:
        print("opsagent: interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to write, quietly
        return BROKEN_PIPE_EXIT
    except PERSON_FACING as exc:
        for line in str(exc).splitlines() or [type(exc).__name__]:
            print(f"opsagent: {line}", file=sys.stderr)
        return 2
    except Exception as exc:
        if os.environ.get(DEBUG_ENV):
            traceback.print_exc()
        print(
            f"opsagent: unexpected {type(exc).__name__}: {exc}. This is a bug: please report it with the command "
            f"you ran ({DEBUG_ENV}=1 shows the details).",
            file=sys.stderr,
        )
        return 70


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config",
        type=Path,
        default=argparse.SUPPRESS,
        help="the configuration file (default: $OPSAGENT_CONFIG, ./opsagent.toml); before or after the command",
    )
    common.add_argument(
        "--log-file", type=Path, default=argparse.SUPPRESS, help="write log lines to this file instead of stderr"
    )
    parser = argparse.ArgumentParser(
        prog="opsagent", description="OpsAgent: an incident-response agent.", parents=[common]
    )
    parser.add_argument("--version", action="version", version=f"opsagent {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help, description=help, parents=[common])

    setup = command("init", "write a commented opsagent.toml from flags or a few questions, then check it")
    init.add_arguments(setup)
    setup.set_defaults(handler=_init)

    demo = command("demo", "investigate the built-in demo incident, offline (a scripted model) unless asked")
    demo.add_argument("--trace", type=Path, help="where to save the trace (default: traces/<run id>.json)")
    demo.add_argument("--keep", type=Path, metavar="DIR", help="keep the backends and an opsagent.toml in DIR")
    demo.add_argument(
        "--model-from-config", action="store_true", help="run on the configured model instead of the scripted one"
    )
    demo.set_defaults(handler=_demo)

    run = command("investigate", "investigate TASK with the configured model and tools")
    run.add_argument("task", nargs="?", help="what to investigate (with --scripted: the demo's task by default)")
    run.add_argument("--trace", type=Path, help="where to save the trace (default: traces/<run id>.json)")
    run.add_argument("--interactive", action="store_true", help="then take follow-up questions, as a Slack thread")
    run.add_argument(
        "--scripted", action="store_true", help="play the demo's scripted model (for `opsagent demo --keep` backends)"
    )
    run.set_defaults(handler=_investigate)

    replay = command(
        "replay", "re-run a trace's recorded model turns on today's kernel and tools (side effects dry-run)"
    )
    replay.add_argument("trace", type=Path, help="the trace file to replay")
    replay.add_argument("--json", action="store_true", help="print the comparison as JSON")
    replay.set_defaults(handler=_replay)

    stats = command("stats", "summarise every trace under DIR: success, steps, tokens, tool errors")
    stats.add_argument("directory", type=Path, metavar="DIR")
    stats.add_argument("--json", action="store_true", help="print the summary as JSON")
    stats.set_defaults(handler=_stats)

    evaluate = command("eval", "score the agent on scenarios with recorded tool outputs (side effects always dry-run)")
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
    evaluate.set_defaults(handler=_eval)

    tools = command("tools", "list the configured tools, or call one through the agent's dispatch")
    tool_commands = tools.add_subparsers(dest="tools_command", required=True, metavar="list|call")
    listing = tool_commands.add_parser("list", help="the registered tools and their argument schemas", parents=[common])
    listing.add_argument("--json", action="store_true", help="print the specs as JSON")
    listing.set_defaults(handler=_tools_list)
    call = tool_commands.add_parser(
        "call", help="run one tool and print the observation the model would see", parents=[common]
    )
    call.add_argument("name")
    call.add_argument("--args", default="{}", help="the arguments as a JSON object")
    call.set_defaults(handler=_tools_call)

    add_store_commands(command, common)

    check = command("check", "validate the configuration, probe the model and reach each backend")
    check.set_defaults(handler=_check)

    serve = command("serve", "run the Slack bot (Socket Mode by default)")
    serve.add_argument("--http", action="store_true", help="serve POST /slack/events over HTTP instead of Socket Mode")
    serve.add_argument("--host", default="0.0.0.0", help="the HTTP server's address (default 0.0.0.0)")
    serve.add_argument(
        "--port", type=int, default=3000, help="the HTTP server's port, in both modes for /healthz (default 3000)"
    )
    serve.set_defaults(handler=_serve)
    return parser


async def _init(args: argparse.Namespace) -> int:
    view = TerminalView()
    answers = init.answers_from(args)
    if answers is None:
        view.say("No flags given: a few questions (an empty answer skips a section).", style="bold")
        answers = await init.ask(lambda text: view.print(Text(text, style="bold cyan"), end=""))
    init.write_config(args.output, init.render_config(answers), force=args.force)
    configured = ", ".join(init.summary(answers)) or "nothing yet (every section is a commented example)"
    view.say(f"wrote {args.output}: {configured}", style="bold green")
    view.say(f"checking it (again later with: opsagent --config {args.output} check)…", style="dim")
    return await run_check(load_settings(args.output), view.say)


async def _demo(args: argparse.Namespace) -> int:
    llm = build_llm(_settings(args).llm) if args.model_from_config else None
    if args.model_from_config and llm is None:
        raise ValueError(f"--model-from-config: {NO_MODEL}")
    view = TerminalView()
    result = await run_demo(llm, view=view, keep=args.keep)
    save_trace(result, args.trace, view, directory=args.keep / "traces" if args.keep else Path("traces"))
    if args.keep:
        config = args.keep / "opsagent.toml"
        view.say(f"kept the demo's backends in {args.keep}; try:", style="bold")
        for line in (
            f'opsagent --config {config} tools call search_logs --args \'{{"service": "gateway"}}\'',
            f"opsagent --config {config} investigate --scripted",
            f"opsagent --config {config} replay {args.keep / 'traces' / f'{result.run_id}.json'}",
            f"opsagent stats {args.keep / 'traces'}",
        ):
            view.say(f"  {line}")
    return exit_code(result)


async def _investigate(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.scripted and args.interactive:
        raise ValueError("--interactive needs a model: --scripted plays one scripted investigation")
    if not args.scripted and not args.task:
        raise ValueError('say what to investigate: opsagent investigate "order-service 5xx jumped to 12%"')
    task = args.task or DEMO_TASK
    return await investigate(settings, task, trace=args.trace, interactive=args.interactive, scripted=args.scripted)


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
    if args.feedback is not None or str(args.scenarios) == "export":
        return await eval_export(args)
    from bot.cli.eval_report import render_report as render_eval_report
    from bot.eval.run import run_evaluation, scripted_model
    from bot.eval.scenarios import load_scenarios
    from bot.eval.tools import catalogue_names

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
    async with opened_toolset(_settings(args)) as toolset:
        warn_about_servers(toolset.mcp)
        registry, entries = toolset.tools, {entry.name: entry for entry in toolset.mcp.entries}
        if args.json:
            print(json.dumps([_tool_json(tool, entries.get(tool.name)) for tool in registry], indent=2))
        elif not len(registry):
            print(
                "no tools are configured: add [tools.metrics], [tools.logs], [tools.repos], [tools.kubernetes], "
                "[tools.actions], [tools.mcp.servers.<name>] or [knowledge] runbooks"
            )
        else:
            print(_render_tools(registry, entries))
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
    call = ToolCall(name=args.name, args=arguments)
    async with opened_toolset(settings) as toolset:
        warn_about_servers(toolset.mcp)
        dispatcher = Dispatcher(
            toolset.tools,
            policy=settings.policy,
            confirm=TerminalApprover(TerminalView()),
            redactor=DEFAULT_REDACTOR,
            control=RunControl(),
        )
        outcome = await dispatcher.dispatch(call, CallContext(run_id=f"cli-{uuid.uuid4().hex[:8]}", step=1, call=call))
    print(outcome.text)
    return 1 if outcome.error else 0


async def _check(args: argparse.Namespace) -> int:
    return await run_check(_settings(args), print)


async def _serve(args: argparse.Namespace) -> int:
    # The Slack app, the store drivers and the evaluation load only for the commands that use them: every other
    # command starts without them (a second saved on each `opsagent check`).
    from bot.audit.trail import AuditTrail
    from bot.runs.memory import RunMemory
    from bot.serve import serve_slack
    from bot.slack.settings import SlackSecrets
    from bot.store.factory import opened_store
    from bot.store.journal import StoreActionJournal

    settings = _settings(args)
    llm = require_llm(settings)
    secrets = SlackSecrets.from_env()
    async with opened_store(settings.store.url) as store:
        journal = StoreActionJournal(store.side_effects, AuditTrail(store.audit))
        knowledge = settings.knowledge
        memory = RunMemory(store.memory, store.runs, days=knowledge.memory_days) if knowledge.memory else None
        async with opened_toolset(settings, journal=journal, memory=memory) as toolset:
            for report in toolset.mcp.report():  # a misconfigured server, or a tool left out, is a warning
                say = log.info if report.ok and not report.warnings else log.warning
                say("mcp_server", server=report.name, ok=report.ok, detail=report.message, left_out=report.warnings)

            def agent_for(confirm: ConfirmHook) -> Agent:
                return build_agent(settings, llm=llm, tools=toolset.tools, confirm=confirm)

            await serve_slack(
                settings,
                secrets,
                agent_for,
                tools=toolset.tools,
                store=store,
                http=args.http,
                host=args.host,
                port=args.port,
                runbooks=toolset.runbooks,
                memory=memory,
                drafter=llm,
            )
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(getattr(args, "config", None))


def _render_tools(registry: ToolRegistry, mcp_entries: Mapping[str, McpToolEntry]) -> str:
    blocks = []
    for tool in registry:
        flags = _tool_flags(tool, mcp_entries.get(tool.name))
        schema = json.dumps(tool.spec.parameters.get("properties", {}), indent=2)
        blocks.append(f"{tool.name}{f' [{flags}]' if flags else ''}\n  {tool.spec.description}\n  arguments: {schema}")
    return "\n\n".join(blocks)


def _version() -> str:
    try:
        return version("opsagent")
    except PackageNotFoundError:  # run from a checkout without an install
        return "unknown (not installed)"


def _tool_flags(tool: Tool, entry: McpToolEntry | None) -> str:
    """What an operator needs to know about a tool beyond its description: read-only or a side effect, and
    where it comes from."""
    flags = ["side effect: needs approval" if tool.side_effect else "read-only"]
    if entry is not None:
        flags.insert(0, f"MCP server {entry.server}, tool {printable_name(entry.mcp_name)}")
        if entry.read_only:
            flags[-1] = "read-only (listed in read_only)"
        if tool.deferred:
            flags.append(f"found through {MCP_SEARCH_TOOL}, not sent every turn")
        if entry.read_only_hint and tool.side_effect:
            flags.append("the server says readOnlyHint = true: not trusted; list it in read_only if it only reads")
    return "; ".join(flags)


def _tool_json(tool: Tool, entry: McpToolEntry | None) -> dict[str, Any]:
    """The model-facing spec, plus what the operator needs: side effects, and an MCP tool's origin."""
    data: dict[str, Any] = {**tool.spec.model_dump(), "side_effect": tool.side_effect, "deferred": tool.deferred}
    if entry is not None:
        data["mcp"] = {"server": entry.server, "tool": entry.mcp_name, "read_only_hint": entry.read_only_hint}
    return data


if __name__ == "__main__":
    sys.exit(main())
