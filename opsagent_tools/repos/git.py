"""Read a local git clone at any tag, branch or commit: files, listings, diffs, and the tags and merges of a window.

Runs `git` without a shell, with a timeout and a hardened environment; every path passes the sandbox first.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from kernel import ToolFailure
from opsagent_tools.names import nearest_names
from opsagent_tools.repos.sandbox import (
    DEFAULT_PATH_POLICY,
    REF_HINT,
    ROOT_HINT,
    PathPolicy,
    check_ref,
    close_paths,
    git_path,
    resolve_link,
)
from opsagent_tools.repos.shapes import (
    DEFAULT_MAX_DIFF_BYTES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_PATCH_BYTES_PER_FILE,
    Diff,
    DirEntry,
    DirListing,
    FileChange,
    FileContent,
    PathIsDirectory,
    RefEvent,
    RefHistory,
    RefKind,
    file_content,
    is_merge,
)

DEFAULT_GIT_TIMEOUT = 10.0
MAX_SYMLINK_HOPS = 8
MAX_PATCH_READ_BYTES = 4 * 1024 * 1024
"""The most of a raw patch read from git; files past it are listed without their patch."""
MAX_TREE_NAMES = 200_000
MAX_HISTORY = 200
"""Tags, and commits of the main line, read per history request (newest first)."""

GIT_GLOBAL_ARGS = (
    "--no-pager",
    "--literal-pathspecs",
    "-c",
    "core.quotepath=off",
    "-c",
    "core.pager=cat",
    "-c",
    "color.ui=never",
    "-c",
    "core.fsmonitor=false",
)
DIFF_ARGS = ("--no-color", "--no-ext-diff", "--no-textconv", "-M")
_STATUS = {"A": "added", "D": "deleted", "M": "modified", "R": "renamed", "C": "copied", "T": "type changed"}


def git_env(repo: Path) -> dict[str, str]:
    """A minimal environment for git: no prompts, no pager, no system config, no inherited GIT_DIR, and no
    looking above `repo` for a repository (a wrong path must not read an enclosing one)."""
    env = {key: os.environ[key] for key in ("PATH", "HOME", "TMPDIR", "SYSTEMROOT") if key in os.environ}
    env.update(
        LC_ALL="C",
        GIT_TERMINAL_PROMPT="0",
        GIT_PAGER="cat",
        PAGER="cat",
        GIT_OPTIONAL_LOCKS="0",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_LITERAL_PATHSPECS="1",
        GIT_CEILING_DIRECTORIES=str(repo.resolve().parent),
    )
    return env


@dataclass(frozen=True)
class _TreeEntry:
    mode: str
    kind: str
    oid: str
    size: int | None
    name: str


class GitRepo:
    """One local clone, read through `git` only (never the working tree, so uncommitted files are invisible)."""

    def __init__(
        self,
        name: str,
        path: str | Path,
        *,
        policy: PathPolicy = DEFAULT_PATH_POLICY,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_diff_bytes: int = DEFAULT_MAX_DIFF_BYTES,
        max_patch_bytes_per_file: int = DEFAULT_MAX_PATCH_BYTES_PER_FILE,
        timeout: float = DEFAULT_GIT_TIMEOUT,
        git: str = "git",
    ) -> None:
        self.name = name
        self.path = Path(path)
        self.policy = policy
        self.max_file_bytes = max_file_bytes
        self.max_diff_bytes = max_diff_bytes
        self.max_patch_bytes_per_file = max_patch_bytes_per_file
        self.timeout = timeout
        self._git = git

    async def read_file(self, path: str, ref: str = "HEAD") -> FileContent:
        """The file at `ref` (capped, binary summarised); symlinks are followed only inside the repository."""
        target = self.policy.check(path)
        commit = await self.resolve_ref(ref)
        return await self._read(target, ref, commit, hops=0)

    async def list_dir(self, path: str = "", ref: str = "HEAD") -> DirListing:
        """The entries of a directory at `ref`; deny-listed names are shown but marked as withheld."""
        target = self.policy.check(path, allow_root=True)
        commit = await self.resolve_ref(ref)
        return await self._list(target, ref, commit, hops=0)

    async def diff(self, base: str, head: str, *, path: str | None = None) -> Diff:
        """What changed from `base` to `head` (their trees compared directly), optionally under one path."""
        scope = None
        if path is not None and path.strip() not in ("", "."):
            scope = git_path(self.policy.check(path, allow_root=True))
        pathspec = ("--", scope) if scope else ()
        base_commit = await self.resolve_ref(base)
        head_commit = await self.resolve_ref(head)
        span = (base_commit, head_commit, *pathspec)
        _, numstat, _ = await self._run("diff", *DIFF_ARGS, "--numstat", "-z", *span, check=True)
        _, names, _ = await self._run("diff", *DIFF_ARGS, "--name-status", "-z", *span, check=True)
        _, patch, _ = await self._run("diff", *DIFF_ARGS, "-U3", *span, check=True, max_stdout=MAX_PATCH_READ_BYTES)
        changes = _parse_changes(names, numstat)
        sections = _split_patch(patch.decode("utf-8", errors="replace"))
        if len(patch) >= MAX_PATCH_READ_BYTES and sections:
            sections.pop()  # the last section was cut mid-way; list that file without a patch
        if len(sections) <= len(changes):
            changes = [replace(c, patch=sections[i] if i < len(sections) else None) for i, c in enumerate(changes)]
        changes = [replace(c, patch=None, withheld=True) if _denied(self.policy, c) else c for c in changes]
        _, log, _ = await self._run("log", "--no-color", "-n", "20", "--format=%h %s", f"{base_commit}..{head_commit}")
        _, count, _ = await self._run("rev-list", "--count", f"{base_commit}..{head_commit}")
        total = int(count.strip() or 0)
        note = ""
        if total == 0 and changes:
            note = f"{head} does not descend from {base}: this diff goes from {base}'s files to {head}'s (a rollback?)."
        return Diff(
            repo=self.name,
            base=base,
            head=head,
            changes=changes,
            commits=log.decode("utf-8", errors="replace").splitlines(),
            total_commits=total,
            path=scope,
            note=note,
            max_bytes=self.max_diff_bytes,
            max_patch_bytes_per_file=self.max_patch_bytes_per_file,
        )

    async def tags_and_merges(self, since: datetime, until: datetime) -> RefHistory:
        """Tags dated in the window (an annotated tag by its tagger, a lightweight one by its commit) and merges
        onto the first-parent line of HEAD committed in it; the newest `MAX_HISTORY` of each are read."""
        fields = "%(refname:short)%00%(creatordate:unix)%00%(objectname:short)%00%(*objectname:short)%00%(subject)"
        sort = ("--sort=-creatordate", f"--count={MAX_HISTORY}", f"--format={fields}", "refs/tags")
        _, tags, _ = await self._run("for-each-ref", *sort, check=True)
        after = f"--since={since.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"
        line = ("--format=%h%x00%ct%x00%P%x00%s", f"--max-count={MAX_HISTORY}")
        rc, log, err = await self._run("log", "--first-parent", "--no-color", after, *line, "HEAD")
        if rc != 0 and b"does not have any commits" not in err:
            raise ToolFailure(f"git log failed in {self.name}: {err.decode('utf-8', 'replace').strip()[:200]}")
        events = []
        for record in tags.decode("utf-8", errors="replace").splitlines():
            name, stamp, tagged, peeled, subject = [*record.split("\0"), "", "", "", ""][:5]
            at = _unix_time(stamp)
            if at is not None and since <= at <= until:
                events.append(RefEvent(RefKind.TAG, at, peeled or tagged, subject, name=name))
        for record in log.decode("utf-8", errors="replace").splitlines():
            sha, stamp, parents, subject = [*record.split("\0"), "", "", ""][:4]
            at = _unix_time(stamp)
            if at is not None and since <= at <= until and is_merge(len(parents.split()), subject):
                events.append(RefEvent(RefKind.MERGE, at, sha, subject))
        return RefHistory(events)

    async def resolve_ref(self, ref: str) -> str:
        """The full commit SHA `ref` names, or a `ToolFailure` listing refs that do exist."""
        check_ref(ref)
        rc, out, err = await self._run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        if b"not a git repository" in err:
            raise ToolFailure(f"Repository {self.name} is not available: {self.path} is not a git repository.")
        if rc != 0:
            raise await self._unknown_ref(ref)
        return out.decode().strip()

    async def _read(self, target: PurePosixPath, ref: str, commit: str, *, hops: int) -> FileContent:
        entry = await self._entry(commit, target)
        if entry is None:
            raise await self._not_found(target, ref, commit)
        if entry.kind == "tree":
            raise PathIsDirectory(f"'{target}' is a directory at {ref}.")
        if entry.kind == "commit":
            raise ToolFailure(f"'{target}' is a git submodule: its files live in another repository.")
        if entry.mode == "120000":
            resolved = await self._follow(target, entry, hops)
            content = await self._read(resolved, ref, commit, hops=hops + 1)
            return content if content.symlink_from else replace(content, symlink_from=str(target))
        size = entry.size or 0
        limit = None if size <= self.max_file_bytes else self.max_file_bytes + 1
        _, data, _ = await self._run("cat-file", "blob", entry.oid, check=True, max_stdout=limit)
        return file_content(self.name, str(target), ref, commit[:10], data, size, self.max_file_bytes)

    async def _list(self, target: PurePosixPath, ref: str, commit: str, *, hops: int) -> DirListing:
        rc, out, _ = await self._run("ls-tree", "-z", "-l", f"{commit}:{git_path(target)}")
        if rc != 0:
            entry = await self._entry(commit, target)
            if entry is None:
                raise await self._not_found(target, ref, commit)
            if entry.mode == "120000":
                return await self._list(await self._follow(target, entry, hops), ref, commit, hops=hops + 1)
            raise ToolFailure(f"'{target}' is a file, not a directory.", hint="Read it with read_repo_file.")
        entries = []
        for item in _parse_tree(out):
            child = PurePosixPath(item.name) if target == PurePosixPath(".") else target / item.name
            kind = {"tree": "dir", "commit": "submodule"}.get(item.kind, "symlink" if item.mode == "120000" else "file")
            entries.append(DirEntry(item.name, kind, item.size, withheld=self.policy.denied_by(child) is not None))
        return DirListing(self.name, git_path(target), ref, commit[:10], entries)

    async def _follow(self, link: PurePosixPath, entry: _TreeEntry, hops: int) -> PurePosixPath:
        """Where a symlink entry points, checked by the sandbox; refused if it leaves the repository."""
        _, raw, _ = await self._run("cat-file", "blob", entry.oid, check=True)
        target = raw.decode("utf-8", errors="replace")
        resolved = resolve_link(link, target)
        if resolved is None:
            raise ToolFailure(
                f"'{link}' is a symlink to '{target}', outside the repository; it was not followed. "
                "Only files inside the repository can be read."
            )
        if hops >= MAX_SYMLINK_HOPS:
            raise ToolFailure(f"'{link}' is part of a symlink loop.", hint="Read the file it should point to directly.")
        return self.policy.check(str(resolved), allow_root=True)

    async def _entry(self, commit: str, target: PurePosixPath) -> _TreeEntry | None:
        rc, out, _ = await self._run("ls-tree", "-z", "-l", f"{commit}:{git_path(target.parent)}")
        if rc != 0:
            return None
        return next((e for e in _parse_tree(out) if e.name == target.name), None)

    async def _not_found(self, target: PurePosixPath, ref: str, commit: str) -> ToolFailure:
        _, out, _ = await self._run("ls-tree", "-r", "-z", "--name-only", commit, max_stdout=MAX_TREE_NAMES * 64)
        names = [n for n in out.decode("utf-8", errors="replace").split("\0") if n]
        close = await asyncio.to_thread(close_paths, str(target), names)  # difflib over a big tree is slow
        suggestions = [p for p in close if self.policy.denied_by(p) is None]
        nearest = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        return ToolFailure(f"No file or directory '{target}' at {ref} in {self.name}.{nearest}", hint=ROOT_HINT)

    async def _unknown_ref(self, ref: str) -> ToolFailure:
        fmt = "--format=%(refname:short)"
        _, tags, _ = await self._run("for-each-ref", "--sort=-creatordate", fmt, "refs/tags")
        _, heads, _ = await self._run("for-each-ref", "--sort=-committerdate", fmt, "refs/heads", "refs/remotes")
        tag_names = tags.decode("utf-8", errors="replace").split()
        branch_names = [b for b in heads.decode("utf-8", errors="replace").split() if not b.endswith("/HEAD")]
        close = nearest_names(ref, tag_names + branch_names)
        parts = [f"No ref '{ref}' in repo {self.name}."]
        if close:
            parts.append(f"Did you mean {', '.join(close)}?")
        parts.append(f"Recent tags: {', '.join(tag_names[:8])}." if tag_names else "The repository has no tags.")
        if branch_names:
            parts.append(f"Branches: {', '.join(branch_names[:5])}.")
        parts.append("A tag newer than this clone's last fetch is missing here.")
        return ToolFailure(" ".join(parts), hint=REF_HINT)

    async def _run(self, *args: str, check: bool = False, max_stdout: int | None = None) -> tuple[int, bytes, bytes]:
        """Run git; with `max_stdout`, stop reading (and end git) after that many bytes."""
        if not self.path.is_dir():
            raise ToolFailure(f"Repository {self.name} is not available: {self.path} is not a directory.")
        proc = await asyncio.create_subprocess_exec(
            self._git,
            *GIT_GLOBAL_ARGS,
            *args,
            cwd=self.path,
            env=git_env(self.path),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        assert proc.stderr is not None
        try:
            async with asyncio.timeout(self.timeout):
                if max_stdout is None:
                    out, err = await proc.communicate()
                else:
                    out = await _read_up_to(proc.stdout, max_stdout)
                    if len(out) >= max_stdout:
                        proc.kill()
                        await proc.wait()
                        return 0, out, b""
                    err = await proc.stderr.read()
                    await proc.wait()
        except TimeoutError:
            raise ToolFailure(
                f"git timed out after {self.timeout:g} s in {self.name} (git {args[0]}).",
                hint="Narrow the request: a single path, or two refs closer together.",
            ) from None
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        rc = proc.returncode or 0
        if check and rc != 0:
            detail = err.decode("utf-8", errors="replace").strip().splitlines()
            raise ToolFailure(f"git {args[0]} failed in {self.name}: {detail[0] if detail else f'exit status {rc}'}")
        return rc, out, err


async def _read_up_to(stream: asyncio.StreamReader, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        chunk = await stream.read(min(65536, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _unix_time(stamp: str) -> datetime | None:
    return datetime.fromtimestamp(int(stamp), UTC) if stamp.strip().isdigit() else None


def _parse_tree(out: bytes) -> list[_TreeEntry]:
    entries = []
    for record in out.decode("utf-8", errors="replace").split("\0"):
        if not record:
            continue
        meta, _, name = record.partition("\t")
        mode, kind, oid, size = meta.split()
        entries.append(_TreeEntry(mode, kind, oid, int(size) if size.isdigit() else None, name))
    return entries


def _parse_changes(name_status: bytes, numstat: bytes) -> list[FileChange]:
    """Join `--name-status -z` and `--numstat -z` output (same order) into one record per file."""
    fields = name_status.decode("utf-8", errors="replace").split("\0")
    changes: list[FileChange] = []
    i = 0
    while i < len(fields) and fields[i]:
        letter = fields[i][0]
        if letter in "RC":
            old, new, i = fields[i + 1], fields[i + 2], i + 3
        else:
            old, new, i = None, fields[i + 1], i + 2
        changes.append(FileChange(path=new, status=_STATUS.get(letter, "changed"), old_path=old))
    counts = numstat.decode("utf-8", errors="replace").split("\0")
    j = 0
    for k, change in enumerate(changes):
        if j >= len(counts):
            break
        added, deleted, name = [*counts[j].split("\t", 2), "", ""][:3]
        j += 1 if name else 3  # a rename's names follow in two more fields
        binary = added == "-"
        changes[k] = replace(
            change,
            additions=None if binary else int(added or 0),
            deletions=None if binary else int(deleted or 0),
            binary=binary,
        )
    return changes


def _split_patch(text: str) -> list[str]:
    sections: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git ") or not sections:
            sections.append("")
        sections[-1] += line
    return [s for s in sections if s.startswith("diff --git ")]


def _denied(policy: PathPolicy, change: FileChange) -> bool:
    """A change touches a deny-listed file if either side of a rename is one."""
    return bool(policy.denied_by(change.path) or (change.old_path and policy.denied_by(change.old_path)))
