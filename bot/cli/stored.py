"""The run store as the terminal commands open it (`memory`, `postmortem`, `verify`, `eval export`): the configured
one, migrated as the bot migrates it, but never created: a SQLite file that does not exist is a clear error instead.
And how those that take a run id or a trace file tell which they were given.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

from bot.settings import Settings
from bot.store.factory import opened_store, sqlite_path
from bot.store.protocol import RunStore


@asynccontextmanager
async def existing_store(settings: Settings) -> AsyncIterator[RunStore]:
    """The configured run store, migrated, closed on exit; a ValueError when its SQLite file does not exist."""
    if (missing := missing_file(settings.store.url)) is not None:
        raise ValueError(
            f"no run store at {missing}: nothing is remembered yet (`opsagent serve` creates it), or set [store] url"
        )
    async with opened_store(settings.store.url) as store:
        yield store


def missing_file(url: str) -> str | None:
    """The path of a SQLite store whose file does not exist, else None."""
    if urlsplit(url).scheme != "sqlite":
        return None
    path = sqlite_path(url)
    return None if Path(path).is_file() else path


def names_a_trace_file(target: str) -> bool:
    """Whether `target` names a trace file (an existing file, or a `.json` name) rather than a run id."""
    return target.endswith(".json") or Path(target).is_file()
