"""The guide's code blocks as the tests read them: every fenced block of README.md and docs/**/*.md, where it is
(file and line), its language and its title (```sh title="Needs a Slack app"```), and what running it means.

The conventions the tests hold the guide to:

- A ```toml block is a piece of opsagent.toml that loads by itself over the defaults, as `opsagent check` would
  load it from a file (every section is optional, so the defaults are the minimal valid configuration). A block
  that needs another block to load includes it. One that is deliberately not loadable is titled "Not loaded: why".
- A ```sh (or ```bash, ```shell) block is run, one command a line (a trailing `\\` continues a line; `#` lines
  are comments), by bash in a fresh temporary directory: the venv's bin first on PATH (`opsagent`, and
  `.venv/bin/opsagent` through a `.venv` link, as in a clone), a copy of the repository's `evals/` and
  `opsagent.example.toml`, HOME in that directory, no model, Slack or OPSAGENT_ variables, stdin empty. Every
  command must exit 0, unless its line ends with a comment that starts `# exits N` (`opsagent verify x  # exits 1:
  …`). Commands share the shell: `cd` and `export` carry to the next line.
- A block whose title starts with "Needs" (`Needs a Slack app`, `Needs a model API key`, `Needs a Kubernetes
  cluster`, `Needs Docker`, `Needs a fresh clone`) is not run: a test of its own checks that it says what it needs
  and is valid shell (`bash -n`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bot.settings import ConfigError, load_settings

ROOT = Path(__file__).resolve().parents[2]
SHELLS = frozenset({"sh", "bash", "shell"})
NEEDS = "Needs"
NOT_LOADED = "Not loaded:"
EXITS = "# exits "
FAILED = "__DOC_BLOCK_FAILED__"
"""What the script prints, with the command's number and status, when a command does not exit as written."""
BLOCK_TIMEOUT_S = 100
CLONE_INPUTS = ("evals", "opsagent.example.toml")
"""The repository's files a command of the guide may read, copied into each block's directory."""
UNSET_PREFIXES = ("OPSAGENT_", "OPENAI_", "ANTHROPIC_", "SLACK_")
UNSET = ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS", "VIRTUAL_ENV", "PYTHONPATH")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    """The page's path as a person names it: relative to the repository (or to the directory searched)."""
    line: int
    """The line of the opening fence (1-based)."""
    language: str
    title: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def needs(self) -> bool:
        return self.title.startswith(NEEDS)


@dataclass(frozen=True)
class Command:
    """One command of a shell block: its line in the page, its text, the exit status it must end with."""

    line: int
    text: str
    exits: int


def guide_pages(root: Path = ROOT) -> list[Path]:
    """README.md and every page of the guide under docs/, in a stable order."""
    return [path for path in [root / "README.md", *sorted((root / "docs").rglob("*.md"))] if path.is_file()]


def blocks_of(pages: list[Path], root: Path = ROOT, languages: frozenset[str] | None = None) -> list[Block]:
    """Every fenced block of `pages` (of `languages`, if given)."""
    found = [block for page in pages for block in _blocks(page, root)]
    return [block for block in found if languages is None or block.language in languages]


def _blocks(page: Path, root: Path) -> Iterator[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    name = str(page.relative_to(root))
    number = 0
    while number < len(lines):
        stripped = lines[number].lstrip(" ")
        indent = len(lines[number]) - len(stripped)
        fence = _fence(stripped)
        if not fence:
            number += 1
            continue
        info = stripped[len(fence) :].strip()
        body: list[str] = []
        end = number + 1
        while end < len(lines) and not _closes(lines[end], fence):
            body.append(lines[end][indent:] if lines[end][:indent].strip() == "" else lines[end].lstrip(" "))
            end += 1
        language = info.split(maxsplit=1)[0].lstrip("{.").rstrip("}") if info else ""
        yield Block(name, number + 1, language, _title(info), "\n".join(body))
        number = end + 1


def _fence(stripped: str) -> str:
    """The fence a line opens (``` or ~~~, three or more), else ""."""
    for mark in "`~":
        if stripped.startswith(mark * 3):
            return mark * (len(stripped) - len(stripped.lstrip(mark)))
    return ""


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and stripped.strip(fence[0]) == ""


def _title(info: str) -> str:
    start = info.find('title="')
    if start < 0:
        return ""
    start += len('title="')
    end = info.find('"', start)
    return info[start:end] if end >= 0 else info[start:]


def toml_problems(block: Block, workdir: Path) -> list[str]:
    """Why a ```toml block does not load as opsagent.toml, one line per problem, each naming the page's line
    (of the key it is about, else of the block's fence): empty when it loads."""
    try:
        tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = message.rfind("(at line ")
        line = int(message[at + len("(at line ") :].split(",")[0]) if at >= 0 else len(block.text.splitlines())
        return [f"{block.page}:{block.line + line}: not valid TOML: {message}"]
    config = workdir / "opsagent.toml"
    config.write_text(block.text, encoding="utf-8")
    try:
        load_settings(config, environ={})
    except ConfigError as exc:
        return [_placed(block, problem.removeprefix(f"{config}: ")) for problem in exc.problems]
    return []


def _placed(block: Block, problem: str) -> str:
    """A problem the configuration names by key, at the line of the block that writes that key (else the block's)."""
    for offset, line in enumerate(block.text.splitlines(), start=1):
        key = line.split("=", 1)[0].strip() if "=" in line else ""
        if key and (f"`{key}`" in problem or f" {key} = " in problem):
            return f"{block.page}:{block.line + offset}: {problem}"
    return f"{block.where}: {problem}"


def commands_of(block: Block) -> list[Command]:
    """The commands of a shell block, continued lines joined, comment lines and blank lines left out."""
    commands: list[Command] = []
    pending: list[str] = []
    start = 0
    for offset, raw in enumerate(block.text.splitlines(), start=1):
        if not pending:
            start = block.line + offset
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
        if raw.rstrip().endswith("\\"):
            pending.append(raw.rstrip()[:-1])
            continue
        text = " ".join([*pending, raw]).strip()
        pending = []
        commands.append(Command(start, text, _exits(text)))
    if pending:
        commands.append(Command(start, " ".join(pending).strip(), 0))
    return commands


def _exits(text: str) -> int:
    """The status a command's `# exits N` comment names, else 0."""
    at = text.rfind(EXITS)
    if at <= 0 or not text[at - 1].isspace():
        return 0
    digits = text[at + len(EXITS) :].split(maxsplit=1)[0].rstrip(":.,;")
    return int(digits) if digits.isdigit() else 0


def shell_syntax_problem(block: Block) -> str:
    """What `bash -n` says of a block that is not run, or "" when it is valid shell."""
    checked = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True, check=False)
    return "" if checked.returncode == 0 else f"{block.where}: not valid shell: {checked.stderr.strip()}"


def run_shell_block(block: Block, workdir: Path, root: Path = ROOT) -> str:
    """Run a shell block's commands in `workdir` as the guide's reader would; "" when each exits as written,
    else what went wrong: the page's line, the command, its status, and the end of what it printed."""
    _prepare(workdir, root)
    commands = commands_of(block)
    script = "\n".join(
        f'{command.text}\n__rc=$?; if [ "$__rc" -ne {command.exits} ]; then '
        f'echo "{FAILED} {index} $__rc" >&2; exit 1; fi'
        for index, command in enumerate(commands)
    )
    try:
        ran = subprocess.run(
            ["bash", "-c", script],
            cwd=workdir,
            env=_environment(workdir),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return (
            f"{block.where}: the block did not finish in {BLOCK_TIMEOUT_S} s: does a command wait for a network, "
            'an account or a prompt? Title the block "Needs …" if it cannot run here.'
        )
    at = ran.stderr.rfind(FAILED)
    if at < 0:
        return "" if ran.returncode == 0 else f"{block.where}: the block exited {ran.returncode}\n{_tail(ran)}"
    index, status = ran.stderr[at + len(FAILED) :].split()[:2]
    command = commands[int(index)]
    said = ran.stderr[:at]
    return (
        f"{block.page}:{command.line}: `{command.text}` exited {status}, expected {command.exits} "
        f"(a command expected to fail ends with `{EXITS}N`)\n{_tail(ran, said)}"
    )


def _prepare(workdir: Path, root: Path) -> None:
    """What a reader's clone has after the set-up commands: the venv and the repository's example inputs."""
    (workdir / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    for name in CLONE_INPUTS:
        source = root / name
        if source.is_dir():
            shutil.copytree(source, workdir / name)
        elif source.is_file():
            shutil.copy2(source, workdir / name)


def _environment(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(UNSET_PREFIXES) and k not in UNSET}
    return env | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", "HOME": str(workdir)}


def _tail(ran: subprocess.CompletedProcess[str], stderr: str | None = None, lines: int = 15) -> str:
    said = [*ran.stdout.splitlines()[-lines:], *(ran.stderr if stderr is None else stderr).splitlines()[-lines:]]
    return "\n".join(f"    {line}" for line in said)
