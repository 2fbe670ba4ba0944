"""`opsagent investigate`: one investigation on the terminal, then (with `--interactive`) follow-up questions; with
`--interactive`, a line typed while a run goes is guidance for it, as a mention in its Slack thread would be. An
action approved at the terminal is verified after the run (`bot.cli.verify`).

A follow-up is asked exactly as in a Slack thread (the question, with `follow_up_data`: the earlier task,
answer and side effects as data), so the terminal is a faithful place to try what the bot will do.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bot.agent import build_agent, require_llm
from bot.cli.demo import demo_script
from bot.cli.kept import RunKeeper, run_keeper
from bot.cli.session import exit_code, save_trace, watch
from bot.cli.terminal import Terminal
from bot.cli.terminal_approval import TerminalApprover, TypedLines, read_line
from bot.cli.tools import shown_toolset
from bot.cli.verify import after_the_run
from bot.settings import Settings
from bot.store.protocol import StoreConflictError, StoreUnavailableError
from bot.verdict_actions import action_record
from kernel import LLM, RunResult, StopReason, follow_up_data
from opsagent_tools.runbooks import runbooks_note

FOLLOW_UP_PROMPT = "follow-up question (an empty line ends the session): "


async def investigate(
    settings: Settings, task: str, terminal: Terminal, *, trace: Path | None, interactive: bool, scripted: bool
) -> int:
    """Run `task` (on the demo's scripted model with `scripted`), save its trace (and, with `[store]` configured,
    keep the run in the run store and its memory: `bot.cli.kept`), and with `interactive` keep taking follow-up
    questions until an empty line or the end of input; the exit code is the last run's."""
    llm: LLM = demo_script() if scripted else require_llm(settings, instead="run `opsagent demo`, which runs offline")
    prices = settings.llm.prices if settings.llm else {}
    priced = llm.model in prices
    async with (
        run_keeper(settings) as keeper,
        shown_toolset(settings, terminal, memory=keeper.memory if keeper else None) as toolset,
    ):
        typed = TypedLines(terminal, sys.stdin) if interactive and sys.stdin.isatty() else None  # a person typing
        agent = build_agent(settings, llm=llm, tools=toolset.tools, confirm=TerminalApprover(terminal, lines=typed))
        briefing = await runbooks_note(toolset.runbooks, task)
        result = await watch(
            lambda control: agent.events(task, data=briefing, control=control), terminal, priced=priced, typed=typed
        )
        saved = save_trace(result, trace, terminal)
        kept = await _keep(keeper, result, saved, terminal)
        result = await after_the_run(result, settings, terminal, checker=toolset.symptoms, saved=saved, keeper=kept)
        while interactive and result.stop_reason is not StopReason.CANCELLED:
            terminal.prompt(FOLLOW_UP_PROMPT)
            question = (await read_line(sys.stdin)).strip()
            if not question:
                break
            earlier = follow_up_data(result, actions=action_record(result))
            result = await watch(
                lambda control, asked=question, data=earlier: agent.events(asked, data=data, control=control),
                terminal,
                priced=priced,
                typed=typed,
            )
            saved = save_trace(result, None, terminal)
            kept = await _keep(keeper, result, saved, terminal)
            result = await after_the_run(result, settings, terminal, checker=toolset.symptoms, saved=saved, keeper=kept)
    return exit_code(result)


async def _keep(keeper: RunKeeper | None, result: RunResult, saved: Path, terminal: Terminal) -> RunKeeper | None:
    """Keep the run in the run store when one is configured, and say so; a store that fails loses nothing (the
    trace file has the run) and is said as a warning. The keeper when the run was kept, else None."""
    if keeper is None:
        return None
    try:
        remembered = await keeper.keep(result)
    except (StoreUnavailableError, StoreConflictError) as exc:
        terminal.warn(f"opsagent: the run was not kept in the run store ({exc}); its trace is in {saved}")
        return None
    memory = ", remembered for similar_incidents" if remembered else ""
    terminal.say(f"kept in the run store{memory}: opsagent postmortem {result.run_id}", style="dim")
    return keeper
