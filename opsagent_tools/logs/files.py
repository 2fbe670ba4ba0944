"""Local log files as a log backend: JSON lines and plain text lines under one directory, streamed line by line.

For laptops, demos and incident bundles (`kubectl logs deploy/x > x.log`): no server to run, and nothing outside the directory is read.
"""

from __future__ import annotations

import asyncio
import heapq
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kernel import ToolFailure
from opsagent_tools.logs.records import guess_level, parse_timestamp, record_from_document, structured_fields
from opsagent_tools.logs.search import (
    LOGS_DOWN_HINT,
    LogQuery,
    LogRecord,
    LogSearchResult,
    MessageGrouper,
    canonical_level,
)
from opsagent_tools.logs.source_redaction import RecordRedaction
from opsagent_tools.model_regex import SYNTAX, compile_model_regex

QUERY_SYNTAX = (
    "a case-insensitive substring of the message or its fields (e.g. \"timeout\"), or 're:' and a regular "
    f"expression in {SYNTAX} (case-sensitive unless it starts with (?i), e.g. 're:(?i)time(d)? ?out')"
)
"""How this backend reads `query`, for the tool description."""
CONTINUATION_CHARS = 4000
"""Longest multi-line entry kept (a stack trace's first lines carry the evidence)."""

_STAMP = re.compile(r"(?P<ts>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s+")
_LEVEL_TOKEN = re.compile(r"\[?(?P<level>[A-Za-z]+)\]?:?(?:\s+|$)")
_SERVICE_TOKEN = re.compile(r"\[(?P<service>[\w.\-/]+)\]:?(?:\s+|$)")


class FileLogSettings(BaseModel):
    """The files backend: a directory of `*.log` / `*.jsonl` files.

    A line belongs to a service when its `service`/`app` field or `[service]` tag names it, or when its file does
    (`order-service.log`, or `order-service/2026-11-30.log` when the file name starts with a digit).
    JSON lines use `ts|time|timestamp|@timestamp`, `level|severity`, `service|app`, `msg|message`; plain lines start
    with an ISO time and a level: `2026-11-30T03:38:57Z ERROR [order-service] message` or
    `2026-11-30 03:38:57,123 ERROR message`. Times without an offset are taken as UTC. Lines that start with
    neither (stack trace frames) continue the entry above them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    directory: Path
    """Searched with its subfolders; files and symlinks that resolve outside it are refused."""
    patterns: tuple[str, ...] = Field(default=("*.log", "*.jsonl"), min_length=1)
    """File name patterns (fnmatch) of the files to read."""


class FileLogBackend:
    """Searches the files under one directory; each search reads them once, keeping only the newest lines."""

    def __init__(self, settings: FileLogSettings) -> None:
        self._settings = settings

    async def search(self, q: LogQuery) -> LogSearchResult:
        """Scan the files in a worker thread; a cancelled search (tool timeout) stops the scan too."""
        stop = threading.Event()
        try:
            return await asyncio.to_thread(self._scan, q, stop)
        finally:
            stop.set()

    def _scan(self, q: LogQuery, stop: threading.Event) -> LogSearchResult:
        root = self._settings.directory.expanduser()
        if not root.is_dir():
            raise ToolFailure(
                f"The log directory {root} does not exist or is not a directory. "
                "This is a configuration problem (tools.logs.files.directory).",
                hint=LOGS_DOWN_HINT,
            )
        scan = _Scan(q, text_matcher(q.query))
        files = 0
        for path, service in self._files(root.resolve(), scan.notes):
            files += 1
            scan.read(path, service, stop)
            if stop.is_set():
                break
        if files == 0:
            scan.notes.append(f"{root} holds no files matching {', '.join(self._settings.patterns)}.")
        if scan.orphans:
            scan.notes.append(
                f"{scan.orphans:,} lines without a leading timestamp were skipped (first: {scan.first_orphan})."
            )
        return scan.result()

    def _files(self, root: Path, notes: list[str]) -> Iterator[tuple[Path, str]]:
        """Each log file under `root` once, with the service its name gives; escaping symlinks are refused."""
        seen: set[Path] = set()
        for folder, subfolders, names in os.walk(root):  # does not descend into symlinked folders
            subfolders.sort()
            for name in sorted(names):
                path = Path(folder, name)
                if not any(path.match(pattern) for pattern in self._settings.patterns):
                    continue
                resolved = path.resolve()
                if not resolved.is_relative_to(root):
                    notes.append(
                        f"Skipped {path.relative_to(root)}: it links to {resolved}, outside the log directory."
                    )
                    continue
                if resolved in seen or not resolved.is_file():
                    continue
                seen.add(resolved)
                yield resolved, _service_of(resolved, root)


def _service_of(path: Path, root: Path) -> str:
    stem = path.name.split(".", 1)[0]
    if (not stem or stem[0].isdigit()) and path.parent != root:
        return path.parent.name
    return stem


def text_matcher(query: str) -> Callable[[str], object] | None:
    """A predicate for `query` as QUERY_SYNTAX reads it (a truthy result is a match), or None for an empty query."""
    if not query:
        return None
    if query.startswith("re:"):
        return compile_model_regex(query[3:], where=f"The query {query!r}").search
    needle = query.casefold()
    return lambda text: needle in text.casefold()


def parse_line(line: str, service: str) -> LogRecord | None:
    """A JSON, logfmt or plain text line as a record (`service` when the line names none), or None without a timestamp."""
    document = structured_fields(line)
    if document is not None and (record := record_from_document(document, service=service)) is not None:
        return record
    stamp = _STAMP.match(line)
    when = parse_timestamp(stamp.group("ts")) if stamp else None
    if stamp is None or when is None:
        return None
    rest, level = line[stamp.end() :], ""
    token = _LEVEL_TOKEN.match(rest)
    if token and canonical_level(token.group("level")):
        level, rest = canonical_level(token.group("level")), rest[token.end() :]
    tag = _SERVICE_TOKEN.match(rest)
    if tag:
        service, rest = tag.group("service"), rest[tag.end() :]
    return LogRecord(timestamp=when, service=service, level=level or guess_level(rest), message=rest.strip())


@dataclass
class _Scan:
    """One search's state: the count, the newest records, the groups, and what was seen on the way."""

    q: LogQuery
    matches: Callable[[str], object] | None
    total: int = 0
    newest: list[tuple[float, int, LogRecord]] = field(default_factory=list)
    grouper: MessageGrouper = field(default_factory=MessageGrouper)
    services: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    orphans: int = 0
    first_orphan: str = ""

    def read(self, path: Path, file_service: str, stop: threading.Event) -> None:
        pending: LogRecord | None = None
        extra: list[str] = []
        redaction = RecordRedaction(self.q.redactor)  # a file is one stream, read in order
        with path.open(encoding="utf-8", errors="replace") as lines:
            for number, raw in enumerate(lines, 1):
                if number % 5000 == 0 and stop.is_set():
                    return
                line = raw.rstrip("\r\n")
                if not line.strip():
                    continue
                record = parse_line(line, file_service)
                if record is not None:
                    self._consider(pending, extra, file_service, redaction)
                    pending, extra = record, []
                elif pending is not None:
                    if len(pending.message) + sum(map(len, extra)) < CONTINUATION_CHARS:
                        extra.append(line)
                else:
                    self.orphans += 1
                    self.first_orphan = self.first_orphan or f"{path.name}:{number}"
        self._consider(pending, extra, file_service, redaction)

    def _consider(
        self, record: LogRecord | None, extra: list[str], file_service: str, redaction: RecordRedaction
    ) -> None:
        """Count and keep one entry (with its continuation lines) if it matches; redacted before it is matched."""
        q = self.q
        if record is None:
            return
        if extra:
            record = replace(record, message="\n".join([record.message, *extra]))
        if not q.since <= record.timestamp <= q.until:
            redaction.skip(record)
            return
        self.services.add(record.service or file_service)
        wanted = q.service.casefold()
        if wanted not in (record.service.casefold(), file_service.casefold()) or not q.accepts(record.level):
            redaction.skip(record)
            return
        record = redaction.redact(record)  # the query matches redacted text: it cannot probe for a secret
        if self.matches is not None:
            text = " ".join([record.message, *(f"{k}={v}" for k, v in record.fields.items())])
            if not self.matches(text):
                return
        self.total += 1
        self.grouper.add(record.message, record.timestamp)
        heapq.heappush(self.newest, (record.timestamp.timestamp(), self.total, record))
        if len(self.newest) > q.sample:
            heapq.heappop(self.newest)

    def result(self) -> LogSearchResult:
        records = [record for _, _, record in sorted(self.newest, reverse=True)]
        return LogSearchResult(
            total=self.total,
            records=records,
            groups=self.grouper.groups(),
            services=sorted(self.services) if self.total == 0 else [],
            notes=self.notes,
        )
