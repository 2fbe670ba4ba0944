"""Repository history as changes: tags and merges of every configured repository, deployments and releases on GitHub.

A repository is about a service when the service is its name or one of the names [tools.repos] services maps to it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import assert_never

from opsagent_tools.changes import Change, ChangeQuery, ChangeSource, ChangesSettings, SourceKind, SourceResult
from opsagent_tools.repos.github import GitHubRepo
from opsagent_tools.repos.settings import RepoSettings
from opsagent_tools.repos.shapes import RefKind
from opsagent_tools.repos.tools import RepoBackend


def change_sources(
    settings: ChangesSettings, repos: RepoSettings, backends: Mapping[str, RepoBackend]
) -> list[ChangeSource]:
    """What the repositories add to the timeline, as far as `settings` leave it on: per repository, its GitHub
    deployments and releases, then its tags and merges."""
    sources: list[ChangeSource] = []
    for name, backend in backends.items():
        services = service_names(name, repos.services)
        if settings.github and isinstance(backend, GitHubRepo):
            sources.append(GitHubChanges(backend, services, settings.github_environments))
        if settings.repos:
            sources.append(RefChanges(backend, services))
    return sources


def service_names(repo: str, aliases: Mapping[str, str]) -> frozenset[str]:
    """The names of the services a repository holds: its own, and each alias [tools.repos] services points at it."""
    return frozenset({repo.lower()} | {alias.lower() for alias, target in aliases.items() if target == repo})


class _RepoSource:
    def __init__(self, services: Collection[str]) -> None:
        self.services = frozenset(services)

    def about(self, service: str | None) -> bool:
        return service is None or service.strip().lower() in self.services

    async def check(self, end: datetime) -> str:
        return self.name


class RefChanges(_RepoSource):
    """Tags made and merges onto the main line, through the backend's own reading (local git or GitHub)."""

    kind = SourceKind.GIT

    def __init__(self, backend: RepoBackend, services: Collection[str]) -> None:
        super().__init__(services)
        self.backend = backend
        self.name = f"git {backend.name}"
        self.what = f"tags and merges of {backend.name}"

    async def read(self, query: ChangeQuery) -> SourceResult:
        history = await self.backend.tags_and_merges(query.since, query.until)
        repo = self.backend.name
        changes = []
        for event in history.events:
            match event.kind:
                case RefKind.TAG:
                    text = f'tag {event.name} in {repo} on {event.commit} "{event.subject}"'
                case RefKind.MERGE:
                    text = f'merge into {repo}: {event.commit} "{event.subject}"'
                case _:
                    assert_never(event.kind)
            changes.append(Change(event.at, self.kind, text, event.url))
        return SourceResult(self.name, f"tags and merges of {repo}", changes, [history.note] if history.note else [])


class GitHubChanges(_RepoSource):
    """A GitHub repository's deployments (with their latest status) and published releases."""

    kind = SourceKind.GITHUB

    def __init__(self, repo: GitHubRepo, services: Collection[str], environments: Sequence[str] = ()) -> None:
        super().__init__(services)
        self.repo, self.environments = repo, tuple(environments)
        self.name = f"github {repo.full_name}"
        self.what = f"GitHub deployments and releases of {repo.full_name}"

    async def read(self, query: ChangeQuery) -> SourceResult:
        deployments, releases = await asyncio.gather(
            self.repo.deployments(query.since, query.until, self.environments),
            self.repo.releases(query.since, query.until),
        )
        changes = []
        for d in deployments:
            state = d.state or "no status yet"
            about = f" ({d.description})" if d.description else ""
            text = f"deployment of {d.ref} ({d.sha}) to {d.environment} by {d.creator}: {state}{about}"
            changes.append(Change(d.at, self.kind, text, d.url))
        for r in releases:
            titled = f' "{r.name}"' if r.name != r.tag else ""
            kind = "prerelease" if r.prerelease else "release"
            changes.append(Change(r.at, self.kind, f"{kind} {r.tag}{titled} published by {r.author}", r.url))
        where = f" to {', '.join(self.environments)}" if self.environments else ""
        return SourceResult(self.name, f"deployments{where} and releases of {self.repo.full_name}", changes)
