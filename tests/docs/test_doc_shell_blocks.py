"""Every ```sh block of the README and the guide runs as written from a fresh directory, one command a line, each
exiting as its line says (see doc_blocks for the convention); a block that needs an account is named, not run."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_blocks import (
    BLOCK_TIMEOUT_S,
    SHELLS,
    Command,
    blocks_of,
    commands_of,
    guide_pages,
    run_shell_block,
    shell_syntax_problem,
)

SHELL_BLOCKS = blocks_of(guide_pages(), languages=SHELLS)
RUN = [block for block in SHELL_BLOCKS if not block.needs]
NAMED = [block for block in SHELL_BLOCKS if block.needs]
"""Blocks that need an account, a cluster or a fresh clone: not run here, but each must say what it needs and parse."""


@pytest.mark.timeout(BLOCK_TIMEOUT_S + 30)
@pytest.mark.parametrize("block", RUN, ids=[block.where for block in RUN])
def test_each_shell_block_of_the_guide_runs_as_written(block, tmp_path):
    failure = run_shell_block(block, tmp_path)
    if failure:
        pytest.fail(failure, pytrace=False)


@pytest.mark.parametrize("block", NAMED, ids=[block.where for block in NAMED])
def test_a_block_not_run_here_says_what_it_needs_and_parses(block):
    needs = block.title.removeprefix("Needs ")
    assert needs != block.title, f"{block.where}: a block not run starts its title with 'Needs '"
    assert needs.strip(), f"{block.where}: say what it needs"
    problem = shell_syntax_problem(block)
    if problem:
        pytest.fail(problem, pytrace=False)


def guide(root: Path, text: str) -> list:
    page = root / "docs" / "getting-started.md"
    page.parent.mkdir(parents=True)
    page.write_text(text, encoding="utf-8")
    return blocks_of(guide_pages(root), root, SHELLS)


@pytest.mark.timeout(BLOCK_TIMEOUT_S + 30)
def test_the_quick_start_runs_from_a_fresh_directory_with_relative_paths(tmp_path):
    (block,) = guide(
        tmp_path / "clone",
        "# Getting started\n\n```sh\n"
        "opsagent demo --keep demo            # the backends and an opsagent.toml, kept\n"
        "opsagent --config demo/opsagent.toml tools call search_logs \\\n"
        '    --args \'{"service": "gateway"}\'\n'
        "cd demo\n"
        "opsagent stats traces\n"
        "opsagent stats no-such-dir           # exits 2: not a directory\n"
        "```\n",
    )
    workdir = tmp_path / "fresh"
    workdir.mkdir()

    assert run_shell_block(block, workdir) == ""
    assert (workdir / "demo" / "opsagent.toml").is_file()
    assert list((workdir / "demo" / "traces").glob("*.json"))


def test_a_command_that_fails_is_named_by_its_page_line_with_what_it_said(tmp_path):
    (block,) = guide(
        tmp_path / "clone",
        "# Getting started\n\nThen:\n\n```sh\n# a comment line\nopsagent --version\nopsagent stats traces\n"
        "opsagent --version\n```\n",
    )
    workdir = tmp_path / "fresh"
    workdir.mkdir()

    failure = run_shell_block(block, workdir)

    first, *said = failure.splitlines()
    assert first == (
        "docs/getting-started.md:8: `opsagent stats traces` exited 2, expected 0 "
        "(a command expected to fail ends with `# exits N`)"
    )
    assert "    opsagent: traces is not a directory" in said


def test_the_reader_has_no_model_or_slack_account_and_the_clone_s_venv_and_examples(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-developer-s-shell")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-developer-s-shell")
    monkeypatch.setenv("OPSAGENT_CONFIG", "/etc/opsagent.toml")
    (block,) = guide(
        tmp_path / "clone",
        '```sh\ntest -z "${OPENAI_API_KEY-}${SLACK_BOT_TOKEN-}${OPSAGENT_CONFIG-}"\ntest "$HOME" = "$PWD"\n'
        ".venv/bin/opsagent --version\ntest -f opsagent.example.toml\nopsagent eval evals/scenarios --help\n```\n",
    )
    workdir = tmp_path / "fresh"
    workdir.mkdir()

    assert run_shell_block(block, workdir) == ""


def test_a_block_that_needs_an_account_is_checked_as_shell_and_listed_not_run(tmp_path):
    needs_slack, broken = guide(
        tmp_path,
        '```sh title="Needs a Slack app"\nexport SLACK_BOT_TOKEN=xoxb-...\nopsagent serve\n```\n\n'
        '```sh title="Needs a model API key"\nif opsagent demo --model-from-config; then\n```\n',
    )

    assert (needs_slack.needs, needs_slack.title) == (True, "Needs a Slack app")
    assert shell_syntax_problem(needs_slack) == ""
    assert shell_syntax_problem(broken).startswith("docs/getting-started.md:6: not valid shell: ")


def test_commands_are_read_a_line_each_with_continuations_and_expected_exits(tmp_path):
    (block,) = guide(
        tmp_path,
        "```sh\n\n# first the demo\nopsagent demo \\\n  --keep demo\nopsagent verify x   # exits 1: nothing held\n"
        "echo '# exits 3'\nopsagent tools list  # lists them; exits 0\n```\n",
    )

    assert commands_of(block) == [
        Command(4, "opsagent demo    --keep demo", 0),
        Command(6, "opsagent verify x   # exits 1: nothing held", 1),
        Command(7, "echo '# exits 3'", 0),
        Command(8, "opsagent tools list  # lists them; exits 0", 0),
    ]
