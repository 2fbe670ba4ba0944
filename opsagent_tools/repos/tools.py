"""The repository tools the model calls: read a file at a ref, and see what changed between two refs.

Settings name each repository (a local clone or a GitHub repo); both backends share one path sandbox.
"""

# No `from __future__ import annotations`: the tools' argument descriptions are built at run time.

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Protocol

from pydantic import Field

from kernel import SourceLink, Tool, ToolFailure, ToolOutput, tool_from_function
from opsagent_tools.links import LinkSettings
from opsagent_tools.repos.git import GitRepo
from opsagent_tools.repos.github import GitHubRepo
from opsagent_tools.repos.headline import diff_headline, file_headline, listing_headline
from opsagent_tools.repos.links import RepoLinks
from opsagent_tools.repos.sandbox import DEFAULT_PATH_POLICY
from opsagent_tools.repos.settings import RepoSettings
from opsagent_tools.repos.shapes import (
    Diff,
    DirListing,
    FileContent,
    PathIsDirectory,
    RefHistory,
)


class RepoBackend(Protocol):
    """What both `GitRepo` and `GitHubRepo` offer."""

    name: str

    async def read_file(self, path: str, ref: str = "HEAD") -> FileContent: ...
    async def list_dir(self, path: str = "", ref: str = "HEAD") -> DirListing: ...
    async def diff(self, base: str, head: str, *, path: str | None = None) -> Diff: ...
    async def tags_and_merges(self, since: datetime, until: datetime) -> RefHistory:
        """Tags made and merges onto the main line in [since, until], for the change timeline."""
        ...


def build_backends(settings: RepoSettings) -> dict[str, RepoBackend]:
    """One backend per configured repository, all sharing the settings' caps and deny list."""
    policy = DEFAULT_PATH_POLICY.with_extra_deny(settings.extra_deny_patterns)
    caps = {
        "policy": policy,
        "max_file_bytes": settings.max_file_bytes,
        "max_diff_bytes": settings.max_diff_bytes,
        "max_patch_bytes_per_file": settings.max_patch_bytes_per_file,
    }
    backends: dict[str, RepoBackend] = {}
    for name, config in settings.repositories.items():
        if config.path is not None:
            backends[name] = GitRepo(name, config.path, timeout=settings.git_timeout_s, **caps)
        else:
            assert config.github is not None
            backends[name] = GitHubRepo(
                name,
                config.github,
                api_url=config.api_url,
                token_env=config.token_env,
                timeout=settings.http_timeout_s,
                **caps,
            )
    return backends


def repo_tools(
    settings: RepoSettings, links: LinkSettings | None = None, *, backends: Mapping[str, RepoBackend] | None = None
) -> list[Tool]:
    """`read_repo_file` and `compare_refs` over the configured repositories (`backends` when made already); `links`
    says where people see a file or a comparison (GitHub's pages by default; a local clone's only with
    `git_web_url`)."""
    backends = backends if backends is not None else build_backends(settings)
    pages = {
        name: RepoLinks.of(name, config.github, config.api_url, links or LinkSettings())
        for name, config in settings.repositories.items()
    }
    names = ", ".join(sorted(backends))
    default = settings.default_repo or (next(iter(backends)) if len(backends) == 1 else None)
    repo_help = f"Repository or service name: one of {names}" + (
        f"; omit it for {default}." if default else ". Required: several repositories are configured."
    )
    if settings.services:
        aliases = ", ".join(f"{s} (-> {r})" for s, r in sorted(settings.services.items()))
        repo_help += f" Also accepted: {aliases}."

    def pick(repo: str | None) -> RepoBackend:
        if repo is None or not repo.strip():
            if default is None:
                raise ToolFailure(f"Several repositories are configured: {names}.", hint="Pass repo as one of these.")
            return backends[default]
        wanted = repo.strip().lower()
        by_name = {n.lower(): n for n in backends} | {s.lower(): r for s, r in settings.services.items()}
        if wanted in by_name:
            return backends[by_name[wanted]]
        raise ToolFailure(
            f"No repository '{repo}' is configured. Configured: {names}.", hint="Pass one of these as repo."
        )

    async def read_repo_file(
        path: Annotated[
            str,
            Field(description="Relative to the repository root, e.g. 'config/app.yaml'; '' lists the root."),
        ],
        ref: Annotated[
            str, Field(description="Tag, branch or commit SHA, e.g. the deployed version 'v2.14.0'.")
        ] = "HEAD",
        repo: Annotated[str | None, Field(description=repo_help)] = None,
    ) -> ToolOutput:
        """Read a file from a service's source repository as it was at a tag, branch or commit; a directory
        path lists its entries instead. Use it to read the configuration or code that was actually deployed:
        pass the version from the deploy event as ref, typically for a file compare_refs showed as changed.
        Paths are relative to the repository root ('config/app.yaml', not '/config/app.yaml'). Files that
        usually hold secrets (.env, keys, credentials) are refused; long files are cut with a marker saying so;
        binary files are summarised, not shown."""
        backend, root = pick(repo), path.strip() in ("", ".")
        if not root:
            try:
                content = await backend.read_file(path, ref)
            except PathIsDirectory:
                pass  # listed below
            else:
                page = pages[backend.name].file(content.ref, content.path)
                return _output(content.render(), file_headline(content), page)
        listing = await backend.list_dir("" if root else path, ref)
        page = pages[backend.name].directory(listing.ref, listing.path)
        return _output(listing.render(), listing_headline(listing), page)

    async def compare_refs(
        base: Annotated[str, Field(description="The older ref: the version before the deploy, e.g. 'v2.13.2'.")],
        head: Annotated[str, Field(description="The newer ref: the deployed version, e.g. 'v2.14.0'.")],
        repo: Annotated[str | None, Field(description=repo_help)] = None,
        path: Annotated[
            str | None, Field(description="Only changes under this file or directory, e.g. 'config/'.")
        ] = None,
    ) -> ToolOutput:
        """See what changed between two versions of a service's code: the changed files with +/- line counts,
        the commit subjects, then the diff. Use it right after finding a deploy event: base is the version
        before, head the deployed one. Refs are tags, branches or commit SHAs (not ranges like 'a..b'). Long
        diffs are cut per file, config and migration files first, but every changed file is listed; pass path
        to see one file or directory in full, or read the whole file with read_repo_file(path, ref=head)."""
        backend = pick(repo)
        diff = await backend.diff(base, head, path=path)
        return _output(diff.render(), diff_headline(diff), pages[backend.name].compare(diff.base, diff.head))

    return [
        tool_from_function(
            read_repo_file,
            summary="Read a file or directory of a repository at a given version",
            timeout=settings.tool_timeout_s,
            returns="a line '<repo>:<path> at <ref>, <size> bytes', then the file's text (or the directory's entries).",
        ),
        tool_from_function(
            compare_refs,
            summary="Compare two versions of a repository: its commits and changed files",
            timeout=settings.tool_timeout_s,
            returns=(
                "a first line like 'v2.13.2..v2.14.0 in order-service: 3 files changed, +14 -5', the commits, "
                "each changed file with its counts, then the patches."
            ),
        ),
    ]


def _output(text: str, headline: str, link: SourceLink | None) -> ToolOutput:
    return ToolOutput(text, headline=headline, links=(link,) if link is not None else ())
