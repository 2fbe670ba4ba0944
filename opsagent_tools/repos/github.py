"""Read a GitHub (or GitHub Enterprise) repository over the REST API, with the same interface as `GitRepo`.

For services without a local clone: contents at a ref, listings, diffs through the compare API, and its history in a
window: tags and merges (as `GitRepo` reads them) plus what only GitHub knows, deployments and releases.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from kernel import ToolFailure
from opsagent_tools.bounded_json import load_json
from opsagent_tools.names import nearest_names
from opsagent_tools.repos.github_api import DEFAULT_API_URL, DEFAULT_HTTP_TIMEOUT, DEFAULT_TOKEN_ENV, GitHubApi
from opsagent_tools.repos.sandbox import (
    DEFAULT_PATH_POLICY,
    REF_HINT,
    ROOT_HINT,
    PathPolicy,
    check_ref,
    close_paths,
    git_path,
)
from opsagent_tools.repos.shapes import (
    DEFAULT_MAX_DIFF_BYTES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_PATCH_BYTES_PER_FILE,
    DeploymentRecord,
    Diff,
    DirEntry,
    DirListing,
    FileChange,
    FileContent,
    PathIsDirectory,
    RefEvent,
    RefHistory,
    RefKind,
    ReleaseRecord,
    file_content,
    is_merge,
)
from opsagent_tools.time_words import parse_iso

RAW_MEDIA = "application/vnd.github.raw+json"
SHA_MEDIA = "application/vnd.github.sha"
COMPARE_FILE_LIMIT = 300
"""GitHub lists at most this many files in one comparison."""
_STATUS = {"removed": "deleted", "changed": "type changed"}
HISTORY_PAGE = 100
"""Commits, tags, deployments and releases read per request (GitHub's largest page): one page each."""
STATUSES_READ = 20
"""The newest deployments of a window whose latest status is read (one request each)."""


class GitHubRepo:
    """One repository on a GitHub API; the token is read from `token_env` at each call, never shown."""

    def __init__(
        self,
        name: str,
        full_name: str,
        *,
        api_url: str = DEFAULT_API_URL,
        token_env: str = DEFAULT_TOKEN_ENV,
        policy: PathPolicy = DEFAULT_PATH_POLICY,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_diff_bytes: int = DEFAULT_MAX_DIFF_BYTES,
        max_patch_bytes_per_file: int = DEFAULT_MAX_PATCH_BYTES_PER_FILE,
        timeout: float = DEFAULT_HTTP_TIMEOUT,
    ) -> None:
        self.api = GitHubApi(full_name, api_url=api_url, token_env=token_env, timeout=timeout)
        self.name = name
        self.full_name = full_name
        self.policy = policy
        self.max_file_bytes = max_file_bytes
        self.max_diff_bytes = max_diff_bytes
        self.max_patch_bytes_per_file = max_patch_bytes_per_file

    async def read_file(self, path: str, ref: str = "HEAD") -> FileContent:
        """The file at `ref` (capped, binary summarised); GitHub follows symlinks that stay in the repository."""
        target = self.policy.check(path)
        check_ref(ref)
        async with self.api.client() as client:
            resp = await self.api.get(client, self._contents(git_path(target)), ref=ref)
            if resp.status_code == 404:
                raise await self._not_found(client, git_path(target), ref)
            data = self.api.ok_json(resp)
            if isinstance(data, list):
                raise PathIsDirectory(f"'{target}' is a directory at {ref}.")
            kind = data.get("type")
            if kind == "symlink":
                raise ToolFailure(
                    f"'{target}' is a symlink to '{data.get('target', '?')}', which is outside the repository or "
                    "not a regular file; it was not followed. Only files inside the repository can be read."
                )
            if kind == "submodule":
                raise ToolFailure(f"'{target}' is a git submodule: its files live in another repository.")
            real_path = str(data.get("path") or target)
            symlink_from = None
            if real_path != str(target):  # GitHub answered with the file a symlink points to
                real_path, symlink_from = str(self.policy.check(real_path)), str(target)
            size = int(data.get("size") or 0)
            if data.get("encoding") == "base64":
                raw = base64.b64decode(data.get("content") or "")
            else:  # files over 1 MB come without content: fetch the start of the raw bytes
                raw = await self._raw_start(client, real_path, ref, self.max_file_bytes + 1)
        return file_content(self.name, real_path, ref, "", raw, size, self.max_file_bytes, symlink_from)

    async def list_dir(self, path: str = "", ref: str = "HEAD") -> DirListing:
        """The entries of a directory at `ref`; deny-listed names are shown but marked as withheld."""
        target = self.policy.check(path, allow_root=True)
        check_ref(ref)
        async with self.api.client() as client:
            resp = await self.api.get(client, self._contents(git_path(target)), ref=ref)
            if resp.status_code == 404:
                raise await self._not_found(client, git_path(target), ref)
            data = self.api.ok_json(resp)
        if not isinstance(data, list):
            raise ToolFailure(f"'{target}' is a file, not a directory.", hint="Read it with read_repo_file.")
        entries = [
            DirEntry(
                name=str(item.get("name", "")),
                kind={"dir": "dir", "symlink": "symlink", "submodule": "submodule"}.get(item.get("type"), "file"),
                size=item.get("size") if item.get("type") == "file" else None,
                withheld=self.policy.denied_by(str(item.get("path", ""))) is not None,
            )
            for item in data
        ]
        return DirListing(self.name, git_path(target), ref, "", entries)

    async def diff(self, base: str, head: str, *, path: str | None = None) -> Diff:
        """What changed from `base` to `head` as GitHub's compare API sees it (from their merge base)."""
        scope = None
        if path is not None and path.strip() not in ("", "."):
            scope = git_path(self.policy.check(path, allow_root=True))
        check_ref(base)
        check_ref(head)
        async with self.api.client() as client:
            resp = await self.api.get(client, f"/compare/{_ref_part(base)}...{_ref_part(head)}")
            if resp.status_code == 404:
                for ref in (base, head):
                    if not await self._ref_exists(client, ref):
                        raise await self._unknown_ref(client, ref)
                raise ToolFailure(
                    f"GitHub could not compare {base}...{head} in {self.full_name} (404): the refs may share no "
                    f"history, or the token in ${self.api.token_env} cannot see the repository."
                )
            data = self.api.ok_json(resp)
        files = data.get("files") or []
        changes = [self._change(f) for f in files if _in_scope(f, scope)]
        notes = []
        if len(files) >= COMPARE_FILE_LIMIT:
            notes.append(f"GitHub lists at most {COMPARE_FILE_LIMIT} files per comparison; more may have changed.")
        if data.get("status") == "behind":
            notes.append(
                f"{head} is behind {base} by {data.get('behind_by')} commits; GitHub compares from their merge "
                "base, so this shows nothing. Swap base and head to see what the newer ref adds."
            )
        if any(c.patch is None and not c.withheld for c in changes):
            notes.append("GitHub leaves out patches of binary and very large files.")
        commits = [_commit_line(c) for c in reversed(data.get("commits") or [])]
        return Diff(
            repo=self.name,
            base=base,
            head=head,
            changes=changes,
            commits=commits,
            total_commits=data.get("total_commits"),
            path=scope,
            note=" ".join(notes),
            max_bytes=self.max_diff_bytes,
            max_patch_bytes_per_file=self.max_patch_bytes_per_file,
        )

    async def tags_and_merges(self, since: datetime, until: datetime) -> RefHistory:
        """Merges onto the default branch committed in the window, and the tags on its commits. GitHub lists tags
        without dates, so a tag is dated by its commit: one pushed later onto an older commit is not seen."""
        window = {"since": _iso(since), "until": _iso(until), "per_page": str(HISTORY_PAGE)}
        async with self.api.client() as client:
            commits, tags = await asyncio.gather(
                self.api.get_json(client, "/commits", window),
                self.api.get_json(client, "/tags", {"per_page": str(HISTORY_PAGE)}),
            )
        events, dated = [], {}
        for item in _listed(commits):
            sha, detail = str(item.get("sha", "")), item.get("commit") or {}
            at = _time((detail.get("committer") or {}).get("date"))
            if at is None or not since <= at <= until:
                continue
            subject = _subject(detail.get("message"))
            dated[sha] = (at, subject)
            if is_merge(len(item.get("parents") or []), subject):
                events.append(RefEvent(RefKind.MERGE, at, sha[:7], subject, url=item.get("html_url")))
        for tag in _listed(tags):
            sha, name = str((tag.get("commit") or {}).get("sha", "")), str(tag.get("name", ""))
            if sha in dated:
                url = f"{self.api.web_url}/tree/{quote(name, safe='')}"
                events.append(RefEvent(RefKind.TAG, dated[sha][0], sha[:7], dated[sha][1], name=name, url=url))
        note = ""
        if len(_listed(commits)) >= HISTORY_PAGE:
            note = f"more than {HISTORY_PAGE} commits in the window: only the newest were read; narrow the window"
        return RefHistory(events, note)

    async def deployments(
        self, since: datetime, until: datetime, environments: Sequence[str] = ()
    ) -> list[DeploymentRecord]:
        """Deployments created in the window (to `environments`, or any), each with its latest status."""
        async with self.api.client() as client:
            listed = await self.api.get_json(client, "/deployments", {"per_page": str(HISTORY_PAGE)})
            recent = [
                (item, at)
                for item in _listed(listed)
                if (at := _time(item.get("created_at"))) is not None and since <= at <= until
                and (not environments or item.get("environment") in environments)
            ][:STATUSES_READ]  # fmt: skip
            statuses = await asyncio.gather(
                *(self.api.get_json(client, f"/deployments/{int(item['id'])}/statuses", {"per_page": "1"})
                  for item, _ in recent)
            )  # fmt: skip
        found = []
        for (item, at), answer in zip(recent, statuses, strict=True):
            latest = next(iter(_listed(answer)), {})
            link = latest.get("log_url") or latest.get("target_url") or latest.get("environment_url")
            found.append(
                DeploymentRecord(
                    at=at,
                    environment=str(item.get("environment") or "?"),
                    ref=str(item.get("ref") or ""),
                    sha=str(item.get("sha") or "")[:7],
                    creator=str((item.get("creator") or {}).get("login") or "?"),
                    description=str(item.get("description") or ""),
                    state=str(latest.get("state") or ""),
                    url=link or f"{self.api.web_url}/deployments",
                )
            )
        return found

    async def releases(self, since: datetime, until: datetime) -> list[ReleaseRecord]:
        """Releases published in the window (drafts, which have no publication time, are left out)."""
        async with self.api.client() as client:
            listed = await self.api.get_json(client, "/releases", {"per_page": str(HISTORY_PAGE)})
        found = []
        for item in _listed(listed):
            at = _time(item.get("published_at"))
            if item.get("draft") or at is None or not since <= at <= until:
                continue
            tag = str(item.get("tag_name") or "")
            found.append(
                ReleaseRecord(
                    at=at,
                    tag=tag,
                    name=str(item.get("name") or tag),
                    author=str((item.get("author") or {}).get("login") or "?"),
                    prerelease=bool(item.get("prerelease")),
                    url=item.get("html_url"),
                )
            )
        return found

    def _change(self, item: dict[str, Any]) -> FileChange:
        path = str(item.get("filename", ""))
        old = item.get("previous_filename")
        withheld = self.policy.denied_by(path) is not None or (old is not None and self.policy.denied_by(old))
        patch = item.get("patch")
        if patch is not None and not withheld:
            patch = f"diff --git a/{old or path} b/{path}\n{patch}"
        return FileChange(
            path=path,
            status=_STATUS.get(str(item.get("status")), str(item.get("status", "modified"))),
            additions=int(item.get("additions") or 0),
            deletions=int(item.get("deletions") or 0),
            old_path=old,
            patch=None if withheld else patch,
            withheld=bool(withheld),
        )

    def _contents(self, path: str) -> str:
        return "/contents" + (f"/{quote(path, safe='/')}" if path else "")

    async def _raw_start(self, client: httpx.AsyncClient, path: str, ref: str, limit: int) -> bytes:
        params = {"ref": ref} if ref != "HEAD" else None
        url = f"/repos/{self.full_name}{self._contents(path)}"
        chunks: list[bytes] = []
        try:
            async with client.stream("GET", url, params=params, headers=self.api.headers(RAW_MEDIA)) as resp:
                if resp.status_code != 200:
                    await resp.aread()
                    raise self.api.failure(resp)
                async for chunk in resp.aiter_bytes():
                    chunks.append(chunk)
                    if sum(map(len, chunks)) >= limit:
                        break
        except httpx.TimeoutException:
            raise ToolFailure(
                f"GitHub did not send '{path}' within {self.api.timeout:g} s.", hint="Try again."
            ) from None
        return b"".join(chunks)[:limit]

    async def _not_found(self, client: httpx.AsyncClient, path: str, ref: str) -> ToolFailure:
        if ref != "HEAD" and not await self._ref_exists(client, ref):
            return await self._unknown_ref(client, ref)
        parent = path.rpartition("/")[0]
        resp = await self.api.get(client, self._contents(parent), ref=ref)
        listing = load_json(resp.content) if resp.status_code == 200 else None
        if resp.status_code == 404 and not parent:
            return ToolFailure(
                f"Repository {self.full_name} was not found on {self.api.api_url}, or the token in ${self.api.token_env} "
                "cannot see it."
            )
        names = [str(item.get("path", "")) for item in listing] if isinstance(listing, list) else []
        suggestions = [p for p in close_paths(path, names) if self.policy.denied_by(p) is None]
        nearest = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        return ToolFailure(f"No file or directory '{path}' at {ref} in {self.name}.{nearest}", hint=ROOT_HINT)

    async def _ref_exists(self, client: httpx.AsyncClient, ref: str) -> bool:
        resp = await self.api.get(client, f"/commits/{_ref_part(ref)}", accept=SHA_MEDIA)
        return resp.status_code == 200

    async def _unknown_ref(self, client: httpx.AsyncClient, ref: str) -> ToolFailure:
        resp = await self.api.get(client, "/tags", params={"per_page": "30"})
        tags = [str(t.get("name")) for t in load_json(resp.content)] if resp.status_code == 200 else []
        close = nearest_names(ref, tags)
        parts = [f"No ref '{ref}' in repo {self.name} ({self.full_name} on GitHub)."]
        if close:
            parts.append(f"Did you mean {', '.join(close)}?")
        parts.append(f"Tags: {', '.join(tags[:8])}." if tags else "No tags were listed.")
        return ToolFailure(" ".join(parts), hint=REF_HINT)


def _ref_part(ref: str) -> str:
    return quote(ref, safe="/")


def _in_scope(item: dict[str, Any], scope: str | None) -> bool:
    if scope is None:
        return True
    names = (str(item.get("filename", "")), str(item.get("previous_filename") or ""))
    return any(n == scope or n.startswith(scope + "/") for n in names)


def _commit_line(commit: dict[str, Any]) -> str:
    return f"{str(commit.get('sha', ''))[:7]} {_subject((commit.get('commit') or {}).get('message'))}".rstrip()


def _subject(message: Any) -> str:
    lines = str(message or "").splitlines()
    return lines[0] if lines else ""


def _listed(data: Any) -> list[dict[str, Any]]:
    """The objects of a list answer; anything else in their place is skipped."""
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []


def _time(text: Any) -> datetime | None:
    """GitHub's ISO 8601 timestamps ("2026-11-30T05:28:00Z"); None when absent or unreadable."""
    return parse_iso(text) if isinstance(text, str) else None


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
