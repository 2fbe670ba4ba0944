"""`opsagent investigate`: one investigation on the terminal, then (with `--interactive`) follow-up questions.

A follow-up is asked exactly as in a Slack thread (the question, with `follow_up_data`: the earlier task and
answer as data), so the terminal is a faithful place to try what the bot will do.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.text import Text

from bot.agent import build_agent, opened_toolset, require_llm
from bot.cli.demo import demo_script
from bot.cli.session import exit_code, save_trace, warn_about_servers, watch
from bot.cli.terminal import TerminalView
from bot.cli.terminal_approval import TerminalApprover, read_line
from bot.settings import Settings
from kernel import LLM, StopReason, follow_up_data
from opsagent_tools.runbooks import runbooks_note

FOLLOW_UP_PROMPT = "follow-up question (an empty line ends the session): "


async def investigate(settings: Settings, task: str, *, trace: Path | None, interactive: bool, scripted: bool) -> int:
    """Run `task` (on the demo's scripted model with `scripted`), save its trace, and with `interactive` keep
    taking follow-up questions until an empty line or the end of input; the exit code is the last run's."""
    llm: LLM = demo_script() if scripted else require_llm(settings, instead="run `opsagent demo`, which runs offline")
    prices = settings.llm.prices if settings.llm else {}
    view = TerminalView(priced=llm.model in prices)
    async with opened_toolset(settings) as toolset:
        warn_about_servers(toolset.mcp)
        agent = build_agent(settings, llm=llm, tools=toolset.tools, confirm=TerminalApprover(view))
        briefing = await runbooks_note(toolset.runbooks, task)
        result = await watch(lambda control: agent.events(task, data=briefing, control=control), view)
        save_trace(result, trace, view)
        while interactive and result.stop_reason is not StopReason.CANCELLED:
            view.print(Text(FOLLOW_UP_PROMPT, style="bold cyan"), end="")
            question = (await read_line(sys.stdin)).strip()
            if not question:
                break
            earlier = follow_up_data(result)
            result = await watch(
                lambda control, asked=question, data=earlier: agent.events(asked, data=data, control=control), view
            )
            save_trace(result, None, view)
    return exit_code(result)
