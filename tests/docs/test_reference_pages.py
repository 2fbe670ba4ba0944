"""The reference pages of the guide are generated (bot.cli.reference) and checked in: a test fails when a
setting or a command changed and the page did not, saying how to regenerate it; the pages say what is true."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import ROOT

from bot.cli.reference.__main__ import PAGES, stale_pages
from bot.settings import load_settings

REFERENCE = ROOT / "docs" / "reference"
REGENERATE = [sys.executable, "-m", "bot.cli.reference"]
OPSAGENT = Path(sys.executable).with_name("opsagent")


def test_the_checked_in_reference_pages_are_current():
    stale = stale_pages(REFERENCE)
    assert not stale, (
        f"docs/reference/{', '.join(stale)} differ from what the settings models and the command line make now: "
        "run `python -m bot.cli.reference` and commit the result"
    )


def test_check_names_the_stale_page_and_how_to_regenerate_it(tmp_path):
    shutil.copytree(REFERENCE, tmp_path / "reference")
    page = tmp_path / "reference" / "configuration.md"
    page.write_text(page.read_text(encoding="utf-8").replace("| `max_steps` |", "| `max_stepz` |"), encoding="utf-8")

    stale = subprocess.run([*REGENERATE, "--check", tmp_path / "reference"], capture_output=True, text=True)
    assert (stale.returncode, stale.stderr) == (
        1,
        f"opsagent: {tmp_path}/reference/configuration.md is not current: run `python -m bot.cli.reference` to regenerate it\n",
    )

    subprocess.run([*REGENERATE, tmp_path / "reference"], check=True, capture_output=True)
    assert "| `max_steps` |" in page.read_text(encoding="utf-8")
    current = subprocess.run([*REGENERATE, "--check", tmp_path / "reference"], capture_output=True, text=True)
    assert (current.returncode, current.stderr) == (0, "")


def test_every_page_is_generated_into_docs_reference():
    assert sorted(path.name for path in REFERENCE.glob("*.md")) == sorted(PAGES)


@pytest.mark.parametrize(
    ("variable", "value", "read"),
    [
        ("OPSAGENT_BUDGET__MAX_STEPS", "7", lambda s: s.budget.max_steps),
        ("OPSAGENT_SLACK__APPROVERS", '["U012ABCDEF"]', lambda s: s.slack.approvers),
        ("OPSAGENT_TOOLS__DISCOVER__TTL_S", "60", lambda s: s.tools.discover.ttl_s),
        ("OPSAGENT_TOOLS__MCP__SERVERS__<NAME>__URL", "http://127.0.0.1:9/mcp", lambda s: s.tools.mcp.servers["x"].url),
    ],
)
def test_an_environment_variable_the_page_names_sets_its_key(variable, value, read, monkeypatch, tmp_path):
    page = (REFERENCE / "configuration.md").read_text(encoding="utf-8")
    assert f"`{variable}`" in page
    monkeypatch.chdir(tmp_path)  # no ./opsagent.toml: the defaults and the variable only
    monkeypatch.setenv(variable.replace("<NAME>", "X"), value)
    expected = [value[2:-2]] if value.startswith('["') else int(value) if value.isdigit() else value

    assert read(load_settings(None, environ={})) == expected


def test_the_command_page_has_each_command_and_option_opsagent_help_shows(tmp_path):
    page = (REFERENCE / "commands.md").read_text(encoding="utf-8")
    shared = page.split("## Options of every command")[1].split("\n## ")[0]
    assert "`--config CONFIG`" in shared
    assert "`--log-file LOG_FILE`" in shared
    commands = _listed(_help(tmp_path))
    assert {"serve", "demo"} <= set(commands)
    for command in commands:
        assert f"## `opsagent {command}`" in page, command
        own = page.split(f"## `opsagent {command}`")[1].split("\n## ")[0]
        usage = _help(tmp_path, command).split("\n\n")[0]
        options = [word.strip("[],") for word in usage.split() if word.startswith(("--", "[--"))]
        for option in {o.split("=")[0] for o in options} - {"--help", "--config", "--log-file"}:
            assert f"`{option}" in own, (command, option)
    assert _listed(_help(tmp_path, "tools")) == ["list", "call"]
    assert "## `opsagent tools call`" in page


def _help(cwd: Path, *command: str) -> str:
    shown = subprocess.run([OPSAGENT, *command, "--help"], capture_output=True, text=True, cwd=cwd, check=True)
    return shown.stdout


def _listed(help_text: str) -> list[str]:
    """The command names a `--help` lists under its COMMAND (or list|call) heading: 4 spaces, then a word."""
    return [
        line.split()[0] for line in help_text.splitlines() if line.startswith("    ") and not line.startswith("     ")
    ]


def _section(page: str, table: str) -> str:
    return page.split(f"\n## `{table}`\n")[1].split("\n## ")[0]


def test_the_configuration_page_says_what_each_model_says_of_its_keys():
    page = (REFERENCE / "configuration.md").read_text(encoding="utf-8")

    # a docstring under the field, and a Field(description=…), each in its key's row with type, bounds and default
    assert (
        "| `approvers` | list of strings; default `[]` "
        "| Slack user ids allowed to approve side effects.<br>Environment: `OPSAGENT_SLACK__APPROVERS` |"
        in _section(page, "[slack]")
    )
    assert (
        "| `after_s` | number, &gt; 0; default `120.0` "
        "| Seconds after the action of the first check.<br>Environment: `OPSAGENT_VERIFICATION__AFTER_S` |"
        in _section(page, "[verification]")
    )
    # what each value of a closed set means, from the enum's own docstrings
    assert '`"dry_run"`: Side-effect tools return what they would do, and do nothing.' in _section(page, "[policy]")
    # a key with no default, and a secret named rather than written
    assert "| `url` | string; required | " in _section(page, "[tools.metrics]")
    assert "Environment: `OPSAGENT_TOOLS__METRICS__URL` |" in _section(page, "[tools.metrics]")
    webhook = _section(page, "[tools.actions.webhook]")
    assert '| `secret_env` | string; default `"OPSAGENT_ACTION_SECRET"` |' in webhook
    assert "A variable's name, not the secret" in webhook
    # a table of named sections, and a section that must be there when its parent is
    assert "`OPSAGENT_TOOLS__MCP__SERVERS__<NAME>__COMMAND`" in _section(page, "[tools.mcp.servers.<name>]")
    assert "[`[tools.repos.repositories.<name>]`](#toolsreposrepositoriesname) (required)" in page
