"""The repositories family: one backend per repository (a local clone or GitHub), shared by `read_repo_file` and
`compare_refs`, the timeline's tags, merges, deployments and releases, and `opsagent check`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property

from kernel import Tool
from opsagent_tools.changes import ChangeSource, ChangesSettings
from opsagent_tools.check_result import CheckResult, probe
from opsagent_tools.family import ToolFamily
from opsagent_tools.links import LinkSettings
from opsagent_tools.repos.changes import change_sources
from opsagent_tools.repos.check import check_repo
from opsagent_tools.repos.settings import RepoSettings
from opsagent_tools.repos.tools import RepoBackend, build_backends, repo_tools


class ReposFamily(ToolFamily):
    """`[tools.repos]`: `links` says where people see a file or a comparison."""

    keywords = ("code", "source", "repository", "git", "commit", "diff", "config", "bug", "version", "release")

    def __init__(self, settings: RepoSettings, *, links: LinkSettings) -> None:
        self.settings, self.links = settings, links

    @cached_property
    def backends(self) -> Mapping[str, RepoBackend]:
        """One backend per configured repository, by the name the model uses, made once."""
        return build_backends(self.settings)

    def tools(self) -> Sequence[Tool]:
        return repo_tools(self.settings, self.links, backends=self.backends)

    def change_sources(self, settings: ChangesSettings) -> Sequence[ChangeSource]:
        return change_sources(settings, self.settings, self.backends)

    async def check(self) -> list[CheckResult]:
        return [
            await probe(f"repo {name}", lambda backend=backend: check_repo(backend))
            for name, backend in self.backends.items()
        ]
