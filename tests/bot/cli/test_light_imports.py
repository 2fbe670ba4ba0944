"""Light commands stay light: reading traces or the configuration loads no Slack app, store driver or service, and
registering the commands loads none of their work (the tools, their SDKs).

Checked in a fresh interpreter through `sys.modules`, since this test process has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("slack_bolt", "slack_sdk", "aiohttp", "asyncpg", "bot.app", "bot.runs.service", "bot.store.sql")
WORK = ("bot.agent", "bot.settings", "opsagent_tools.toolset", "mcp", "lightkube")
"""What the commands' handlers load when they run: the toolset, the configuration and the tools' SDKs."""


def loaded_after(module: str, then: str = "") -> set[str]:
    probe = "\n".join([f"import json, sys, {module}", then, "print(json.dumps(sorted(sys.modules)))"])
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("module", ["bot.cli.stats", "bot.settings"])
def test_a_light_module_imports_nothing_heavy(module):
    loaded = loaded_after(module)
    assert module in loaded
    assert not [name for name in HEAVY if name in loaded]


def test_the_command_line_registers_every_command_without_loading_their_work():
    """`opsagent stats` or `opsagent --help` start without the tools: each handler imports its work."""
    loaded = loaded_after("bot.cli.main", then="bot.cli.main.build_parser()")
    assert {"bot.cli.commands.serve", "bot.cli.commands.tools", "bot.cli.terminal"} <= loaded
    assert not [name for name in (*HEAVY, *WORK) if name in loaded]


def test_the_probe_sees_heavy_imports_where_there_are_some():
    assert {"slack_bolt", "bot.runs.service"} <= loaded_after("bot.app")
    assert set(WORK) <= loaded_after("bot.cli.tools")
