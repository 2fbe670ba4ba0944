"""`opsagent init`: write a commented opsagent.toml from flags, or from a few questions, then check it.

The questions (asked when no flag is given) cover what a first run needs: metrics, logs, repositories, the model
and who approves in Slack; everything else keeps its default and is named in opsagent.example.toml.
"""

from __future__ import annotations

import argparse
import json
import string
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from bot.cli.terminal import Terminal
from bot.cli.terminal_approval import read_line

LOG_BACKENDS = ("loki", "elasticsearch", "files")
SLACK_ID_CHARS = frozenset(string.ascii_uppercase + string.digits)
T = TypeVar("T")


@dataclass
class Answers:
    """What the new configuration names; empty fields leave their section commented out."""

    prometheus: str = ""
    log_backend: str = ""
    log_location: str = ""
    """Loki's or Elasticsearch's URL, or the directory of log files."""
    repos: list[str] = field(default_factory=list)
    """NAME=PATH or NAME=github:owner/name."""
    model: str = ""
    base_url: str = ""
    provider: str = "openai"
    api_key_env: str = ""
    approvers: list[str] = field(default_factory=list)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `opsagent init`; with none of them, it asks."""
    parser.add_argument("--output", type=Path, default=Path("opsagent.toml"), help="where to write (opsagent.toml)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    parser.add_argument("--prometheus", default="", metavar="URL", help="a Prometheus-compatible base URL")
    parser.add_argument("--logs", default="", metavar="BACKEND=WHERE", help="loki=URL, elasticsearch=URL or files=DIR")
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a local clone (or NAME=github:owner/name); repeatable",
    )
    parser.add_argument("--model", default="", help="the model name, e.g. gpt-4o-mini or qwen2.5:14b")
    parser.add_argument("--base-url", default="", help="an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1")
    parser.add_argument("--provider", choices=("openai", "anthropic"), default="openai")
    parser.add_argument("--api-key-env", default="", metavar="VAR", help="the variable that holds the model's key")
    parser.add_argument(
        "--approver",
        action="append",
        default=[],
        metavar="USER_ID",
        help="a Slack user id (U…) who may approve; repeatable",
    )


def answers_from(args: argparse.Namespace) -> Answers | None:
    """The flags as answers, or None when no flag was given (then `init` asks). A malformed flag is a ValueError
    naming it, by the rule its question uses."""
    backend, where = _flag("--logs", args.logs, log_backend) if args.logs else ("", "")
    answers = Answers(
        prometheus=_flag("--prometheus", args.prometheus, prometheus_url),
        log_backend=backend,
        log_location=where,
        repos=[_flag("--repo", repo, repositories)[0] for repo in args.repo],
        model=args.model,
        base_url=_flag("--base-url", args.base_url, endpoint_url),
        provider=args.provider,
        api_key_env=args.api_key_env,
        approvers=[_flag("--approver", user, user_ids)[0] for user in args.approver],
    )
    return None if answers == Answers(provider=args.provider) else answers


def _flag(flag: str, value: str, parse: Callable[[str], T]) -> T:
    try:
        return parse(value)
    except ValueError as exc:
        raise ValueError(f"{flag} {value}: {exc}") from None


def prometheus_url(text: str) -> str:
    """A Prometheus-compatible base URL, or recorded series as a file:// URL ("" for none)."""
    if text and not _is_url(text, ("http", "https", "file")):
        raise ValueError("write a URL such as http://prometheus:9090 (or file:///path/series.jsonl for a recording)")
    return text


def log_backend(text: str) -> tuple[str, str]:
    """`loki=URL`, `elasticsearch=URL` or `files=DIR` as (backend, where); ("", "") for none."""
    backend, _, where = (part.strip() for part in text.partition("="))
    if not text:
        return "", ""
    if backend not in LOG_BACKENDS or not where or (backend != "files" and not _is_url(where, ("http", "https"))):
        raise ValueError("write loki=URL, elasticsearch=URL or files=DIR, e.g. loki=http://loki:3100")
    return backend, where


def repositories(text: str) -> list[str]:
    """Comma-separated `NAME=PATH` (or `NAME=github:owner/name`), each stripped."""
    repos = [repo.strip() for repo in text.split(",") if repo.strip()]
    for repo in repos:
        name, _, where = repo.partition("=")
        if not name.strip() or not where.strip():
            raise ValueError(f"{repo!r}: write NAME=PATH (or NAME=github:owner/name)")
    return repos


def endpoint_url(text: str) -> str:
    """An OpenAI-compatible base URL ("" for OpenAI itself)."""
    if text and not _is_url(text, ("http", "https")):
        raise ValueError("write a URL such as http://localhost:11434/v1")
    return text


def user_ids(text: str) -> list[str]:
    """Comma-separated Slack user ids: U or W, then capital letters and digits (Slack shows one in a profile's ⋮ menu)."""
    users = [user.strip() for user in text.split(",") if user.strip()]
    for user in users:
        if len(user) < 2 or user[0] not in "UW" or not set(user[1:]) <= SLACK_ID_CHARS:
            raise ValueError(
                f"{user!r} is not a Slack user id: write ids such as U024BE7LH (a profile's ⋮ menu, Copy member ID)"
            )
    return users


def _is_url(text: str, schemes: Sequence[str]) -> bool:
    parts = urlsplit(text)
    return parts.scheme in schemes and bool(parts.netloc or (parts.scheme == "file" and parts.path))


async def ask(terminal: Terminal, read: Callable[[], Awaitable[str]] | None = None) -> Answers:
    """The questions, one line each; an empty answer skips a section, a malformed one is said and asked again.
    Input that ends after a malformed answer is a ValueError: nothing is written rather than a section lost."""
    reader = read or (lambda: read_line(sys.stdin))

    async def question(text: str, parse: Callable[[str], T]) -> T:
        problem = ""
        while True:
            terminal.prompt(text)
            line = await reader()
            if problem and not line:  # the input ended after a malformed answer: there is no one to ask again
                raise ValueError(f"{text.partition(' (')[0]}: {problem}; the input ended, so nothing was written")
            try:
                return parse(line.strip())
            except ValueError as exc:
                problem = str(exc)
                terminal.say(f"{problem}; try again", style="yellow")

    answers = Answers(prometheus=await question("Prometheus URL (empty: none): ", prometheus_url))
    answers.log_backend, answers.log_location = await question(
        "Logs: loki=URL, elasticsearch=URL or files=DIR (empty: none): ", log_backend
    )
    answers.repos = await question("Repositories: NAME=PATH, comma-separated (empty: none): ", repositories)
    answers.base_url = await question(
        "Model endpoint: an OpenAI-compatible base URL (empty: OpenAI itself): ", endpoint_url
    )
    answers.model = await question(
        "Model name (empty: gpt-4o-mini, or the environment's OPSAGENT_LLM_MODEL): ", str.strip
    )
    answers.approvers = await question(
        "Slack user ids who may approve actions, comma-separated (empty: none yet): ", user_ids
    )
    return answers


def render_config(answers: Answers, *, now: datetime | None = None) -> str:
    """The commented opsagent.toml: what was answered, and every skipped section as a commented example."""
    day = (now or datetime.now(UTC)).date().isoformat()
    out = [
        f"# OpsAgent configuration, written by `opsagent init` on {day}. Every key: opsagent.example.toml.",
        "# Secrets never go here: keys ending in _env name the environment variable that holds one.",
        "# The environment overrides any key: OPSAGENT_<SECTION>__<KEY>, e.g. OPSAGENT_POLICY__MODE=dry_run.",
        "",
        "# --- the model ---",
    ]
    out += _llm(answers)
    out += [
        "",
        "[policy]",
        'mode = "read_only"   # read_only | dry_run | allowlist | full; every side effect also needs a human approval',
        "",
        "# --- metrics: Prometheus or a compatible API (VictoriaMetrics, Thanos, Mimir, Cortex) ---",
    ]
    if answers.prometheus:
        out += [
            "[tools.metrics]",
            f"url = {_q(answers.prometheus)}",
            'service_label = "service"   # the label that names a service',
        ]
    else:
        out += ["# [tools.metrics]", '# url = "http://prometheus:9090"']
    out += ["", "# --- logs: one backend ---"]
    out += _logs(answers)
    out += ["", "# --- code: local clones or GitHub ---"]
    if answers.repos:
        out.append("[tools.repos.repositories]")
        out += [_repo_line(repo) for repo in answers.repos]
    else:
        out += ["# [tools.repos.repositories]", '# order-service = "/srv/clones/order-service"']
    out += [
        "",
        "# --- side effects: only through your webhook, only after approval, only when [policy] allows ---",
        "# [tools.actions.webhook]",
        '# url = "https://deploy-bridge.internal/opsagent"',
        '# secret_env = "OPSAGENT_ACTION_SECRET"',
        "",
        "# --- the Slack bot (`opsagent serve`): tokens come from SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_SIGNING_SECRET ---",
        "[slack]",
        f"approvers = {json.dumps(answers.approvers)}   # Slack user ids (U…) who may approve side effects",
        "",
    ]
    return "\n".join(out)


def _llm(answers: Answers) -> list[str]:
    if not (answers.model or answers.base_url or answers.api_key_env or answers.provider != "openai"):
        return [
            "# Without an [llm] section the model comes from the environment: OPSAGENT_LLM_MODEL and",
            "# OPSAGENT_LLM_BASE_URL, OPENAI_API_KEY, or ANTHROPIC_API_KEY.",
            "# [llm]",
            '# model = "gpt-4o-mini"',
        ]
    default = "claude-sonnet-4-5" if answers.provider == "anthropic" else "gpt-4o-mini"
    lines = ["[llm]", f"provider = {_q(answers.provider)}", f"model = {_q(answers.model or default)}"]
    lines += [f"base_url = {_q(answers.base_url)}"] if answers.base_url else []
    if answers.api_key_env:
        lines.append(f"api_key_env = {_q(answers.api_key_env)}   # the variable that holds the key")
    else:
        key = "ANTHROPIC_API_KEY" if answers.provider == "anthropic" else "OPSAGENT_LLM_API_KEY or OPENAI_API_KEY"
        lines.append(f'# api_key_env = "MY_KEY"   # default: {key}')
    return lines


def _logs(answers: Answers) -> list[str]:
    match answers.log_backend:
        case "loki":
            return ["[tools.logs]", 'backend = "loki"', "", "[tools.logs.loki]", f"url = {_q(answers.log_location)}"]
        case "elasticsearch":
            return [
                "[tools.logs]",
                'backend = "elasticsearch"',
                "",
                "[tools.logs.elasticsearch]",
                f"url = {_q(answers.log_location)}",
                '# index = "logs-*"',
            ]
        case "files":
            return [
                "[tools.logs]",
                'backend = "files"',
                "",
                "[tools.logs.files]",
                f"directory = {_q(answers.log_location)}",
            ]
        case _:
            return [
                "# [tools.logs]",
                '# backend = "loki"   # files | loki | elasticsearch',
                "# [tools.logs.loki]",
                '# url = "http://loki:3100"',
            ]


def _repo_line(repo: str) -> str:
    name, _, where = repo.partition("=")
    return f"{_q(name.strip())} = {_q(where.strip())}"


def write_config(path: Path, text: str, *, force: bool) -> None:
    """Write the file, refusing to replace one unless `force`."""
    if path.exists() and not force:
        raise ValueError(f"{path} exists: pass --force to replace it, or --output another file")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def summary(answers: Answers) -> Sequence[str]:
    """What the file configures, in words, for the line after it is written."""
    parts = [
        "metrics" if answers.prometheus else "",
        f"logs ({answers.log_backend})" if answers.log_backend else "",
        f"{len(answers.repos)} repositor{'y' if len(answers.repos) == 1 else 'ies'}" if answers.repos else "",
        "a model" if answers.model or answers.base_url else "",
        f"{len(answers.approvers)} approver(s)" if answers.approvers else "",
    ]
    return [part for part in parts if part]
