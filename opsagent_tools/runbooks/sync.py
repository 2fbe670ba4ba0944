"""Keeping a git repository of runbooks checked out in a cache directory, with the git command line.

A shallow fetch of one ref, then a forced checkout of what was fetched: until the next fetch succeeds, the
working tree is the last good copy, and it survives a restart of the process.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from opsagent_tools.repos.git import git_env

_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")


class SyncFailed(Exception):
    """A fetch or checkout failed; the message names the command and git's reason (credentials removed)."""


def shown_url(url: str) -> str:
    """The URL without a user or password in it, fit for logs, messages and `opsagent check`."""
    parts = urlsplit(url)
    if parts.scheme and "@" in parts.netloc:
        return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    return url


def mirror_directory(cache_dir: Path, url: str) -> Path:
    """The checkout directory for `url`: one per URL, so changing the URL never mixes two repositories."""
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(urlsplit(url).path).name.removesuffix(".git"))[:40] or "runbooks"
    return cache_dir.expanduser() / f"{name}-{digest}"


class GitMirror:
    """One repository's `ref`, checked out in `directory`."""

    def __init__(self, url: str, ref: str, directory: Path, *, timeout_s: float, git: str = "git") -> None:
        self.url, self.ref, self.directory = url, ref, directory
        self.timeout_s = timeout_s
        self._git = git

    async def update(self) -> str:
        """Fetch `ref` and check it out; the commit now checked out. Raises `SyncFailed`, leaving the last
        good checkout in place."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if not (self.directory / ".git").is_dir():
            await self._run("init", "-q")
        await self._run("fetch", "--quiet", "--depth", "1", "--no-tags", "--", self.url, self.ref)
        await self._run("checkout", "--quiet", "--force", "--detach", "FETCH_HEAD")
        await self._run("clean", "--quiet", "--force", "-d", "-x")
        return await self._run("rev-parse", "HEAD")

    async def checked_out(self) -> str | None:
        """The commit a previous sync left checked out (perhaps by an earlier process), or None."""
        if not (self.directory / ".git").is_dir():
            return None
        try:
            return await self._run("rev-parse", "--verify", "--quiet", "HEAD")
        except SyncFailed:
            return None

    async def _run(self, *args: str) -> str:
        """Run one git command in the checkout; its standard output, or `SyncFailed` with git's first error line."""
        proc = await asyncio.create_subprocess_exec(
            self._git,
            "-c",
            "advice.detachedHead=false",
            *args,
            cwd=self.directory,
            env=git_env(self.directory),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(self.timeout_s):
                out, err = await proc.communicate()
        except TimeoutError:
            raise SyncFailed(f"git {args[0]} timed out after {self.timeout_s:g} s") from None
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        if proc.returncode != 0:
            lines = [line.strip() for line in err.decode("utf-8", errors="replace").splitlines() if line.strip()]
            reason = lines[-1] if lines else f"exit status {proc.returncode}"
            raise SyncFailed(f"git {args[0]} failed: {_without_credentials(reason, self.url)}")
        return out.decode("utf-8", errors="replace").strip()


def _without_credentials(text: str, url: str) -> str:
    return _CREDENTIALS.sub("", text.replace(url, shown_url(url)))
