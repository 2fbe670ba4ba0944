"""`opsagent investigate`: one investigation on the terminal, then (with `--interactive`) follow-up questions.

A follow-up is asked exactly as in a Slack thread (the question, with `follow_up_data`: the earlier task and
answer as data), so the terminal is a faithful place to try what the bot will do.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bot.agent import build_agent, require_llm
from bot.cli.demo import demo_script
from bot.cli.session import exit_code, save_trace, watch
from bot.cli.terminal import Terminal
from bot.cli.terminal_approval import TerminalApprover, read_line
from bot.cli.tools import shown_toolset
from bot.settings import Settings
from kernel import LLM, StopReason, follow_up_data
from opsagent_tools.runbooks import runbooks_note

FOLLOW_UP_PROMPT = "follow-up question (an empty line ends the session): "


async def investigate(
    settings: Settings, task: str, terminal: Terminal, *, trace: Path | None, interactive: bool, scripted: bool
) -> int:
    """Run `task` (on the demo's scripted model with `scripted`), save its trace, and with `interactive` keep
    taking follow-up questions until an empty line or the end of input; the exit code is the last run's."""
    llm: LLM = demo_script() if scripted else require_llm(settings, instead="run `opsagent demo`, which runs offline")
    prices = settings.llm.prices if settings.llm else {}
    priced = llm.model in prices
    async with shown_toolset(settings, terminal) as toolset:
        agent = build_agent(settings, llm=llm, tools=toolset.tools, confirm=TerminalApprover(terminal))
        briefing = await runbooks_note(toolset.runbooks, task)
        result = await watch(
            lambda control: agent.events(task, data=briefing, control=control), terminal, priced=priced
        )
        save_trace(result, trace, terminal)
        while interactive and result.stop_reason is not StopReason.CANCELLED:
            terminal.prompt(FOLLOW_UP_PROMPT)
            question = (await read_line(sys.stdin)).strip()
            if not question:
                break
            earlier = follow_up_data(result)
            result = await watch(
                lambda control, asked=question, data=earlier: agent.events(asked, data=data, control=control),
                terminal,
                priced=priced,
            )
            save_trace(result, None, terminal)
    return exit_code(result)
