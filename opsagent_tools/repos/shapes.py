"""What the repository backends return: file contents, listings, diffs, history events, and how each is shown.

Both backends (local git, GitHub) produce these, so the model sees one format whichever is configured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import PurePosixPath

from kernel import ToolFailure

DEFAULT_MAX_FILE_BYTES = 64 * 1024
DEFAULT_MAX_DIFF_BYTES = 32 * 1024
DEFAULT_MAX_PATCH_BYTES_PER_FILE = 12 * 1024
MAX_LISTED_ENTRIES = 300
MAX_LISTED_COMMITS = 20
_PULL_REQUEST_SUFFIX = re.compile(r"\(#\d+\)$")
"""How a squash or rebase merge on GitHub ends its subject: "Tune the pool (#412)"."""
_MAGIC = (
    (b"\x89PNG", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"),
    (b"PK\x03\x04", "zip archive (zip, jar or wheel)"),
    (b"\x1f\x8b", "gzip data"),
    (b"\x7fELF", "ELF executable"),
    (b"SQLite format 3", "SQLite database"),
)


class PathIsDirectory(ToolFailure):
    """`read_file` was given a directory; callers list it instead."""


@dataclass(frozen=True)
class FileContent:
    """A file at a ref: its text (capped at `shown_bytes` of `size`), or a summary if it is binary."""

    repo: str
    path: str
    ref: str
    commit: str
    size: int
    text: str
    shown_bytes: int
    binary_kind: str | None = None
    """Set for binary files, whose content is never shown: 'PNG image', or 'binary data'."""
    symlink_from: str | None = None
    """The symlink (inside the repository) that led to this file."""

    @property
    def truncated(self) -> bool:
        return self.binary_kind is None and self.shown_bytes < self.size

    def render(self) -> str:
        at = f"{self.ref} (commit {self.commit})" if self.commit else self.ref
        via = f"; reached through the symlink {self.symlink_from}" if self.symlink_from else ""
        where = f"{self.repo}:{self.path} at {at}"
        if self.binary_kind is not None:
            return f"{where}: binary file ({self.binary_kind}), {self.size} bytes{via}; its content is not shown."
        text = f"{where}, {self.size} bytes{via}\n{self.text}"
        if self.truncated:
            text = f"{text.rstrip(chr(10))}\n…[truncated: showing the first {self.shown_bytes} of {self.size} bytes]"
        return text


def file_content(
    repo: str, path: str, ref: str, commit: str, data: bytes, size: int, max_bytes: int, symlink_from: str | None = None
) -> FileContent:
    """Build a `FileContent` from (the start of) a blob: binary if a NUL is in its first 8000 bytes, as git decides."""
    common = {"repo": repo, "path": path, "ref": ref, "commit": commit, "size": size, "symlink_from": symlink_from}
    if b"\0" in data[:8000]:
        kind = next((name for magic, name in _MAGIC if data.startswith(magic)), "binary data")
        return FileContent(**common, text="", shown_bytes=0, binary_kind=kind)
    shown = data[:max_bytes]
    if len(shown) < size:
        newline = shown.rfind(b"\n")
        if newline >= len(shown) // 2:
            shown = shown[: newline + 1]
    return FileContent(**common, text=shown.decode("utf-8", errors="replace"), shown_bytes=len(shown))


@dataclass(frozen=True)
class DirEntry:
    name: str
    kind: str
    """'dir', 'file', 'symlink' or 'submodule'."""
    size: int | None = None
    withheld: bool = False


@dataclass(frozen=True)
class DirListing:
    """A directory at a ref; deny-listed entries are named but marked as withheld."""

    repo: str
    path: str
    ref: str
    commit: str
    entries: list[DirEntry]

    def render(self) -> str:
        at = f"{self.ref} (commit {self.commit})" if self.commit else self.ref
        order = sorted(self.entries, key=lambda e: (e.kind != "dir", e.name))
        where = f"{self.path}/" if self.path else "/"
        lines = [f"{self.repo}:{where} at {at}: {len(order)} entries (directories first)"]
        for entry in order[:MAX_LISTED_ENTRIES]:
            if entry.withheld:
                lines.append(f"  {entry.name}  (withheld: matches the secret-file deny list)")
            elif entry.kind == "dir":
                lines.append(f"  {entry.name}/")
            elif entry.kind == "file":
                lines.append(f"  {entry.name}  {entry.size} bytes" if entry.size is not None else f"  {entry.name}")
            else:
                lines.append(f"  {entry.name}  ({entry.kind})")
        if len(order) > MAX_LISTED_ENTRIES:
            lines.append(f"…[{len(order) - MAX_LISTED_ENTRIES} more entries not shown; list a subdirectory]")
        return "\n".join(lines)


@dataclass(frozen=True)
class FileChange:
    """One changed file; counts are None for binary files, and `patch` None when not available or withheld."""

    path: str
    status: str
    additions: int | None = 0
    deletions: int | None = 0
    old_path: str | None = None
    patch: str | None = None
    binary: bool = False
    withheld: bool = False

    def summary(self) -> str:
        name = f"{self.old_path} -> {self.path}" if self.old_path and self.old_path != self.path else self.path
        counts = "binary" if self.binary else f"+{self.additions} -{self.deletions}"
        note = "  (patch withheld: matches the secret-file deny list)" if self.withheld else ""
        return f"  {self.status:<8} {name}  {counts}{note}"


@dataclass(frozen=True)
class Diff:
    """What changed from `base` to `head`: every file with its counts, commit subjects, and capped patches."""

    repo: str
    base: str
    head: str
    changes: list[FileChange]
    commits: list[str] = field(default_factory=list)
    """'<short sha> <subject>', newest first."""
    total_commits: int | None = None
    path: str | None = None
    note: str = ""
    max_bytes: int = DEFAULT_MAX_DIFF_BYTES
    max_patch_bytes_per_file: int = DEFAULT_MAX_PATCH_BYTES_PER_FILE

    @property
    def additions(self) -> int:
        return sum(c.additions or 0 for c in self.changes)

    @property
    def deletions(self) -> int:
        return sum(c.deletions or 0 for c in self.changes)

    def headline(self) -> str:
        scope = f" (path {self.path})" if self.path else ""
        n = len(self.changes)
        files = f"{n} file{'' if n == 1 else 's'} changed"
        return f"{self.base}..{self.head} in {self.repo}{scope}: {files}, +{self.additions} -{self.deletions}"

    def render(self) -> str:
        lines = [self.headline()]
        if self.total_commits == 0:
            lines.append("Commits: none")
        elif self.total_commits is not None:
            lines.append(f"Commits ({self.total_commits}, newest first):")
            lines += [f"  {c}" for c in self.commits[:MAX_LISTED_COMMITS]]
            if self.total_commits > min(len(self.commits), MAX_LISTED_COMMITS):
                lines.append(f"  …and {self.total_commits - min(len(self.commits), MAX_LISTED_COMMITS)} more")
        if not self.changes:
            lines.append("No file differs between these refs.")
            return "\n".join(lines)
        lines.append("Files:")
        lines += [c.summary() for c in self.changes]
        if self.note:
            lines.append(self.note)
        with_patch = sorted((c for c in self.changes if c.patch), key=lambda c: change_priority(c.path))
        missing = [c.path for c in self.changes if not (c.patch or c.withheld or c.binary or _pure_rename(c))]
        if missing:
            lines.append(f"No patch available for: {', '.join(missing)}.")
        if with_patch:
            cap = self.max_bytes if len(with_patch) == 1 else self.max_patch_bytes_per_file
            budgets = _allot([len((c.patch or "").encode()) for c in with_patch], self.max_bytes, cap)
            patches = [self._cut(c, budget) for c, budget in zip(with_patch, budgets, strict=True)]
            lines.append("\nDiff (config, migration and deploy files first):")
            if any("…[patch cut:" in p for p in patches):
                lines.append(
                    "Long patches are cut: compare_refs with path='<file>' shows one file's diff in full, "
                    f"read_repo_file(path='<file>', ref='{self.head}') the whole file."
                )
            lines += patches
        return "\n".join(lines)

    def _cut(self, change: FileChange, budget: int) -> str:
        patch = (change.patch or "").rstrip("\n")
        if len(patch.encode()) <= budget:
            return patch
        lines = patch.split("\n")
        first_hunk = next((i for i, line in enumerate(lines) if line.startswith("@@")), len(lines))
        kept, used = lines[:first_hunk], 0
        for line in lines[first_hunk:]:
            used += len(line.encode()) + 1
            if used > budget:
                break
            kept.append(line)
        total = len(lines) - first_hunk
        shown = len(kept) - first_hunk
        return "\n".join(kept) + f"\n…[patch cut: showing {shown} of {total} lines]"


def change_priority(path: str) -> int:
    """Sort key for patches: config, migrations and deploy files first, lock files last."""
    p = PurePosixPath(path.lower())
    if p.name in _LOCK_FILES:
        return 3
    if set(p.parts[:-1]) & _CONFIG_DIRS or p.suffix in _CONFIG_SUFFIXES or p.name.startswith("dockerfile"):
        return 0
    if set(p.parts[:-1]) & {"test", "tests", "spec", "__tests__"} or p.name.startswith("test_"):
        return 2
    return 1


_LOCK_FILES = {"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "go.sum", "cargo.lock", "uv.lock"}
_CONFIG_DIRS = {"config", "configs", "conf", "deploy", "helm", "charts", "k8s", "kubernetes", "migrations", "db"}
_CONFIG_SUFFIXES = {".yaml", ".yml", ".json", ".toml", ".ini", ".cfg", ".conf", ".properties", ".sql", ".tf"}


def _pure_rename(change: FileChange) -> bool:
    return change.status == "renamed" and not change.additions and not change.deletions


def _allot(sizes: list[int], total: int, cap: int) -> list[int]:
    """Share `total` bytes among patches: small ones in full, the rest split evenly (each at most `cap`)."""
    budgets = [0] * len(sizes)
    remaining = total
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    for done, i in enumerate(order):
        budgets[i] = min(sizes[i], cap, remaining // (len(sizes) - done))
        remaining -= budgets[i]
    return budgets


# --- history in a time window -------------------------------------------------------------------


class RefKind(StrEnum):
    """What a history event is: a tag, or a merge onto the main line."""

    TAG = "tag"
    MERGE = "merge"


@dataclass(frozen=True)
class RefEvent:
    """A tag or a merge in a repository's history: when, on which commit, and its subject line."""

    kind: RefKind
    at: datetime
    commit: str
    """The short SHA of the merge commit, or of the commit the tag points to."""
    subject: str
    name: str = ""
    """The tag's name ("" for a merge)."""
    url: str | None = None
    """Where a person can see it (GitHub); None for a local clone."""


@dataclass(frozen=True)
class RefHistory:
    """The tags and merges of a window, and a note when the backend could not read all of them."""

    events: list[RefEvent]
    note: str = ""


def is_merge(parents: int, subject: str) -> bool:
    """A merge commit (two or more parents), or a GitHub squash or rebase merge, whose subject ends "(#123)"."""
    return parents > 1 or _PULL_REQUEST_SUFFIX.search(subject.strip()) is not None


@dataclass(frozen=True)
class DeploymentRecord:
    """A GitHub deployment: what was deployed where, by whom, and its latest status ("" when it has none)."""

    at: datetime
    environment: str
    ref: str
    sha: str
    creator: str
    description: str
    state: str
    url: str | None


@dataclass(frozen=True)
class ReleaseRecord:
    """A published GitHub release."""

    at: datetime
    tag: str
    name: str
    author: str
    prerelease: bool
    url: str | None
