"""The runbook library: where the runbooks come from, when they are read again, and what `opsagent check` says.

A directory is re-read when a file in it changes; a git repository is fetched again once its copy is older than
the sync interval. A runbook that cannot be read is skipped with one line naming the file; a failed fetch keeps
the last good copy and says so. Nothing here raises into a tool call or a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import assert_never

import structlog

from opsagent_tools.runbooks.documents import MAX_FILE_BYTES, FrontMatterError, Runbook, parse_runbook
from opsagent_tools.runbooks.index import RunbookIndex
from opsagent_tools.runbooks.settings import RunbookSettings
from opsagent_tools.runbooks.sync import GitMirror, SyncFailed, mirror_directory, shown_url
from opsagent_tools.time_words import utc_now

log = structlog.get_logger("opsagent.runbooks")

SUFFIX = ".md"
IGNORED_NAMES = frozenset({"readme.md", "contributing.md", "changelog.md"})
"""Files in a runbook repository that are about the repository, not runbooks."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that is not in the library, and why."""

    path: str
    problem: str

    def line(self) -> str:
        """The one line that names the file and the problem."""
        return f"{self.path}: {self.problem}"


@dataclass(frozen=True, slots=True)
class LibraryStatus:
    """What the library holds and where it came from, for `opsagent check` and the tools' notes."""

    source: str
    count: int = 0
    skipped: tuple[Skipped, ...] = ()
    loaded_at: datetime | None = None
    commit: str | None = None
    """For a git repository: the commit the runbooks were read from."""
    synced_at: datetime | None = None
    """For a git repository: when a fetch last succeeded."""
    error: str | None = None
    """Why the last update (a fetch, a re-scan) failed, when it did; the last good copy is still served."""

    def describe(self) -> str:
        """One line: how many runbooks, from where, and how fresh."""
        where = self.source + (f" at {self.commit[:10]}" if self.commit else "")
        text = f"{self.count} runbook{'s' if self.count != 1 else ''} from {where}"
        if self.synced_at is not None:
            text += f", last synced {self.synced_at:%Y-%m-%d %H:%M:%SZ}"
        if self.skipped:
            text += f"; {len(self.skipped)} skipped"
        if self.error is not None:
            kept = "serving the last good copy" if self.loaded_at is not None else "and there is no copy to serve"
            text += f"; the last update failed ({self.error}), {kept}"
        return text


@dataclass(frozen=True, slots=True)
class DirectorySource:
    """Runbooks in a directory that someone else keeps up to date."""

    root: Path


@dataclass(frozen=True, slots=True)
class GitSource:
    """Runbooks in a git repository, mirrored into a cache directory."""

    mirror: GitMirror


@dataclass(frozen=True, slots=True)
class TextSource:
    """Runbooks given as text by path (an evaluation scenario's, or a test's)."""

    texts: Mapping[str, str]


Source = DirectorySource | GitSource | TextSource


class RunbookLibrary:
    """The configured runbooks, searchable; `index()` re-reads them when they are due, and never raises."""

    def __init__(
        self,
        source: Source,
        *,
        interval_s: float = 300.0,
        max_bytes: int = MAX_FILE_BYTES,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._source, self._interval_s, self._max_bytes, self._clock = source, interval_s, max_bytes, clock
        self._index = RunbookIndex([])
        self._status = LibraryStatus(source=_describe_source(source))
        self._version: object = None
        """What the loaded runbooks were read from (a commit, or the files' sizes and times): unchanged, no re-read."""
        self._checked_at: float | None = None
        self._lock: asyncio.Lock | None = None
        self._refreshing: asyncio.Future[LibraryStatus] | None = None

    @classmethod
    def from_settings(cls, settings: RunbookSettings) -> RunbookLibrary | None:
        """The library `[knowledge]` configures, or None when it names no runbooks."""
        source: Source
        if settings.runbooks_git is not None:
            directory = mirror_directory(settings.cache_dir, settings.runbooks_git)
            source = GitSource(
                GitMirror(settings.runbooks_git, settings.ref, directory, timeout_s=settings.git_timeout_s)
            )
        elif settings.runbooks is not None:
            source = DirectorySource(settings.runbooks.expanduser())
        else:
            return None
        return cls(source, interval_s=settings.sync_interval_s, max_bytes=settings.max_runbook_bytes)

    @property
    def status(self) -> LibraryStatus:
        """What the library holds now (without re-reading anything)."""
        return self._status

    async def index(self, *, wait_s: float | None = None) -> RunbookIndex:
        """The runbooks, re-read first when the last look is older than the sync interval.

        The re-read runs on its own: waiting for it (up to `wait_s`, None: until it ends) may be cut short,
        by `wait_s` or by a tool's timeout, and it still finishes for the next caller; meanwhile the runbooks
        already loaded are the answer.
        """
        due = self._checked_at is None or time.monotonic() - self._checked_at >= self._interval_s
        if due and (self._refreshing is None or self._refreshing.done()):
            self._refreshing = asyncio.ensure_future(self.refresh())
        if self._refreshing is not None and not self._refreshing.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._refreshing), wait_s)
        return self._index

    async def refresh(self) -> LibraryStatus:
        """Look at the source now: fetch or re-scan, and re-read the runbooks if they changed."""
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            try:
                await self._refresh()
            except OSError as exc:  # an unreadable directory or cache: said, not raised
                self._status = replace(self._status, error=f"{type(exc).__name__}: {exc}")
                log.warning("runbooks_unreadable", source=self._status.source, error=str(exc))
            self._checked_at = time.monotonic()
        return self._status

    async def _refresh(self) -> None:
        match self._source:
            case TextSource(texts=texts):
                if self._version is None:
                    self._load(*await asyncio.to_thread(_parse_all, dict(texts)), version=True)
            case DirectorySource(root=root):
                if not root.is_dir():
                    raise FileNotFoundError(f"{root} is not a directory (knowledge.runbooks)")
                version = await asyncio.to_thread(_fingerprint, root)
                if version != self._version:
                    self._load(*await asyncio.to_thread(_read_directory, root, self._max_bytes), version=version)
            case GitSource(mirror=mirror):
                await self._sync(mirror)
            case _:
                assert_never(self._source)

    async def _sync(self, mirror: GitMirror) -> None:
        try:
            commit: str | None = await mirror.update()
        except SyncFailed as exc:
            log.warning("runbooks_sync_failed", source=self._status.source, error=str(exc))
            self._status = replace(self._status, error=str(exc))
            commit = await mirror.checked_out() if self._version is None else None
            if commit is None:
                return
        else:
            self._status = replace(self._status, synced_at=self._clock(), error=None)
        if commit != self._version:
            found = await asyncio.to_thread(_read_directory, mirror.directory, self._max_bytes)
            self._load(*found, version=commit)
            self._status = replace(self._status, commit=commit)

    def _load(self, index: RunbookIndex, skipped: list[Skipped], *, version: object) -> None:
        for problem in skipped:
            log.warning("runbook_skipped", source=self._status.source, path=problem.path, problem=problem.problem)
        self._index, self._version = index, version
        self._status = replace(self._status, count=len(index), skipped=tuple(skipped), loaded_at=self._clock())
        log.info("runbooks_loaded", source=self._status.source, count=len(index), skipped=len(skipped))


def _describe_source(source: Source) -> str:
    match source:
        case DirectorySource(root=root):
            return f"directory {root}"
        case GitSource(mirror=mirror):
            return f"git {shown_url(mirror.url)} ({mirror.ref})"
        case TextSource(texts=texts):
            return f"{len(texts)} given texts"
        case _:
            assert_never(source)


def _runbook_files(root: Path) -> list[tuple[str, Path]]:
    """(relative path, file) of every `*.md` under `root`, skipping hidden directories, repository files and
    symlinks that lead out of `root`."""
    base = root.resolve()
    found = []
    for path in sorted(root.rglob(f"*{SUFFIX}")):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or relative.name.lower() in IGNORED_NAMES:
            continue
        if not path.resolve().is_relative_to(base) or not path.is_file():
            continue
        found.append((PurePosixPath(*relative.parts).as_posix(), path))
    return found


def _fingerprint(root: Path) -> tuple[tuple[str, int, int], ...]:
    """The runbook files' names, sizes and modification times: a change means a re-read."""
    return tuple((name, (st := path.stat()).st_size, st.st_mtime_ns) for name, path in _runbook_files(root))


def _read_directory(root: Path, max_bytes: int) -> tuple[RunbookIndex, list[Skipped]]:
    texts: dict[str, str] = {}
    skipped: list[Skipped] = []
    for name, path in _runbook_files(root):
        match _read_file(name, path, max_bytes):
            case Skipped() as problem:
                skipped.append(problem)
            case text:
                texts[name] = text
    index, broken = _parse_all(texts)
    return index, sorted(skipped + broken, key=lambda s: s.path)


def _read_file(name: str, path: Path, max_bytes: int) -> str | Skipped:
    """The file's text, or why it is skipped; never more than `max_bytes` + 1 bytes are read, so a file that grew
    after it was listed is refused too, not read whole."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            data = file.read(max_bytes + 1) if size <= max_bytes else b""
        if size > max_bytes or len(data) > max_bytes:
            return Skipped(name, f"{max(size, len(data)):,} bytes, over knowledge.max_runbook_bytes ({max_bytes:,})")
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return Skipped(name, "not UTF-8 text")
    except OSError as exc:
        return Skipped(name, f"cannot be read ({exc.strerror or exc})")


def _parse_all(texts: Mapping[str, str]) -> tuple[RunbookIndex, list[Skipped]]:
    runbooks: list[Runbook] = []
    skipped: list[Skipped] = []
    for name, text in sorted(texts.items()):
        try:
            runbooks.append(parse_runbook(name.removesuffix(SUFFIX), text))
        except FrontMatterError as exc:
            skipped.append(Skipped(name, str(exc)))
    return RunbookIndex(runbooks), skipped
