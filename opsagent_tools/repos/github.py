"""Read a GitHub (or GitHub Enterprise) repository over the REST API, with the same interface as `GitRepo`.

For services without a local clone: contents at a ref, directory listings, and diffs through the compare API.
"""

from __future__ import annotations

import base64
import os
import re
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from kernel import ToolFailure
from opsagent_tools.names import nearest_names
from opsagent_tools.repos.sandbox import DEFAULT_PATH_POLICY, REF_HINT, PathPolicy, check_ref, close_paths, git_path
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
    file_content,
)

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_TOKEN_ENV = "GITHUB_TOKEN"
DEFAULT_HTTP_TIMEOUT = 10.0
API_VERSION = "2022-11-28"
JSON_MEDIA = "application/vnd.github+json"
RAW_MEDIA = "application/vnd.github.raw+json"
SHA_MEDIA = "application/vnd.github.sha"
COMPARE_FILE_LIMIT = 300
"""GitHub lists at most this many files in one comparison."""
FULL_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_STATUS = {"removed": "deleted", "changed": "type changed"}


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
        if not FULL_NAME.match(full_name) or ".." in full_name:
            raise ValueError(f"GitHub repository must be 'owner/name', got {full_name!r}")
        self.name = name
        self.full_name = full_name
        self.api_url = api_url.rstrip("/")
        self.token_env = token_env
        self.policy = policy
        self.max_file_bytes = max_file_bytes
        self.max_diff_bytes = max_diff_bytes
        self.max_patch_bytes_per_file = max_patch_bytes_per_file
        self.timeout = timeout

    async def read_file(self, path: str, ref: str = "HEAD") -> FileContent:
        """The file at `ref` (capped, binary summarised); GitHub follows symlinks that stay in the repository."""
        target = self.policy.check(path)
        check_ref(ref)
        async with self._client() as client:
            resp = await self._get(client, self._contents(git_path(target)), ref=ref)
            if resp.status_code == 404:
                raise await self._not_found(client, git_path(target), ref)
            data = self._ok_json(resp)
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
        async with self._client() as client:
            resp = await self._get(client, self._contents(git_path(target)), ref=ref)
            if resp.status_code == 404:
                raise await self._not_found(client, git_path(target), ref)
            data = self._ok_json(resp)
        if not isinstance(data, list):
            raise ToolFailure(f"'{target}' is a file, not a directory; read it with read_repo_file.")
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
        async with self._client() as client:
            resp = await self._get(client, f"/compare/{_ref_part(base)}...{_ref_part(head)}")
            if resp.status_code == 404:
                for ref in (base, head):
                    if not await self._ref_exists(client, ref):
                        raise ToolFailure(await self._unknown_ref(client, ref))
                raise ToolFailure(
                    f"GitHub could not compare {base}...{head} in {self.full_name} (404): the refs may share no "
                    f"history, or the token in ${self.token_env} cannot see the repository."
                )
            data = self._ok_json(resp)
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

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.api_url, timeout=self.timeout, follow_redirects=True)

    def _headers(self, accept: str = JSON_MEDIA) -> dict[str, str]:
        headers = {"Accept": accept, "X-GitHub-Api-Version": API_VERSION, "User-Agent": "opsagent"}
        token = os.environ.get(self.token_env, "").strip()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _contents(self, path: str) -> str:
        return "/contents" + (f"/{quote(path, safe='/')}" if path else "")

    async def _get(
        self,
        client: httpx.AsyncClient,
        suffix: str,
        *,
        ref: str | None = None,
        params: dict[str, str] | None = None,
        accept: str = JSON_MEDIA,
    ) -> httpx.Response:
        """GET under the repository; 200, 404 and 422 come back, anything else is a `ToolFailure` with advice."""
        if ref and ref != "HEAD":  # without a ref GitHub reads the default branch
            params = {**(params or {}), "ref": ref}
        url = f"/repos/{self.full_name}{suffix}"
        try:
            resp = await client.get(url, params=params, headers=self._headers(accept))
        except httpx.TimeoutException:
            raise ToolFailure(
                f"GitHub did not answer within {self.timeout:g} s ({self.full_name}). Try again, or use other "
                "evidence (metrics, logs) if GitHub is slow."
            ) from None
        except httpx.HTTPError as exc:
            raise ToolFailure(f"Could not reach the GitHub API at {self.api_url} ({type(exc).__name__}).") from None
        if resp.status_code in (200, 404, 422):
            return resp
        raise self._http_failure(resp)

    def _http_failure(self, resp: httpx.Response) -> ToolFailure:
        status, headers = resp.status_code, resp.headers
        message = _message(resp)
        if status in (403, 429) and (headers.get("x-ratelimit-remaining") == "0" or headers.get("retry-after")):
            if headers.get("retry-after", "").isdigit():
                wait = f"retry after {headers['retry-after']} s"
            else:
                reset = int(headers.get("x-ratelimit-reset", "0") or 0)
                at = datetime.fromtimestamp(reset, UTC).strftime("%H:%M:%S UTC")
                wait = f"it resets at {at} (in about {max(0, round(reset - time.time()))} s)"
            tip = "" if self._headers().get("Authorization") else f" Setting ${self.token_env} raises the limit."
            return ToolFailure(
                f"GitHub API rate limit reached ({status}: {message}); {wait}. Do not retry before then: "
                f"use other evidence meanwhile.{tip}"
            )
        if status == 401:
            return ToolFailure(f"GitHub rejected the token in ${self.token_env} (401: {message}). It needs renewing.")
        if status == 403:
            return ToolFailure(
                f"GitHub refused access to {self.full_name} (403: {message}). The token in ${self.token_env} may "
                "lack read access to this repository's contents."
            )
        if status >= 500:
            return ToolFailure(f"GitHub returned {status} ({message}); try again shortly.")
        return ToolFailure(f"GitHub answered {status}: {message}.")

    def _ok_json(self, resp: httpx.Response) -> Any:
        if resp.status_code != 200:
            raise self._http_failure(resp)
        try:
            return resp.json()
        except ValueError:
            raise ToolFailure(f"GitHub answered {resp.status_code} with a body that is not JSON.") from None

    async def _raw_start(self, client: httpx.AsyncClient, path: str, ref: str, limit: int) -> bytes:
        params = {"ref": ref} if ref != "HEAD" else None
        url = f"/repos/{self.full_name}{self._contents(path)}"
        chunks: list[bytes] = []
        try:
            async with client.stream("GET", url, params=params, headers=self._headers(RAW_MEDIA)) as resp:
                if resp.status_code != 200:
                    await resp.aread()
                    raise self._http_failure(resp)
                async for chunk in resp.aiter_bytes():
                    chunks.append(chunk)
                    if sum(map(len, chunks)) >= limit:
                        break
        except httpx.TimeoutException:
            raise ToolFailure(f"GitHub did not send '{path}' within {self.timeout:g} s; try again.") from None
        return b"".join(chunks)[:limit]

    async def _not_found(self, client: httpx.AsyncClient, path: str, ref: str) -> ToolFailure:
        if ref != "HEAD" and not await self._ref_exists(client, ref):
            return ToolFailure(await self._unknown_ref(client, ref))
        parent = path.rpartition("/")[0]
        resp = await self._get(client, self._contents(parent), ref=ref)
        listing = resp.json() if resp.status_code == 200 else None
        if resp.status_code == 404 and not parent:
            return ToolFailure(
                f"Repository {self.full_name} was not found on {self.api_url}, or the token in ${self.token_env} "
                "cannot see it."
            )
        names = [str(item.get("path", "")) for item in listing] if isinstance(listing, list) else []
        suggestions = [p for p in close_paths(path, names) if self.policy.denied_by(p) is None]
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        return ToolFailure(
            f"No file or directory '{path}' at {ref} in {self.name}.{hint} Paths are relative to the repository "
            "root; read_repo_file with path '' lists the root."
        )

    async def _ref_exists(self, client: httpx.AsyncClient, ref: str) -> bool:
        resp = await self._get(client, f"/commits/{_ref_part(ref)}", accept=SHA_MEDIA)
        return resp.status_code == 200

    async def _unknown_ref(self, client: httpx.AsyncClient, ref: str) -> str:
        resp = await self._get(client, "/tags", params={"per_page": "30"})
        tags = [str(t.get("name")) for t in resp.json()] if resp.status_code == 200 else []
        close = nearest_names(ref, tags)
        parts = [f"No ref '{ref}' in repo {self.name} ({self.full_name} on GitHub)."]
        if close:
            parts.append(f"Did you mean {', '.join(close)}?")
        parts.append(f"Tags: {', '.join(tags[:8])}." if tags else "No tags were listed.")
        parts.append(REF_HINT)
        return " ".join(parts)


def _ref_part(ref: str) -> str:
    return quote(ref, safe="/")


def _in_scope(item: dict[str, Any], scope: str | None) -> bool:
    if scope is None:
        return True
    names = (str(item.get("filename", "")), str(item.get("previous_filename") or ""))
    return any(n == scope or n.startswith(scope + "/") for n in names)


def _commit_line(commit: dict[str, Any]) -> str:
    message = str((commit.get("commit") or {}).get("message") or "")
    return f"{str(commit.get('sha', ''))[:7]} {message.splitlines()[0] if message else ''}".rstrip()


def _message(resp: httpx.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        return resp.text[:200] or resp.reason_phrase
    return str(body.get("message") if isinstance(body, dict) else body)[:200]
