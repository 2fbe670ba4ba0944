"""The configured tool set: which tools exist is decided by which families the configuration names.

One function builds the registry the agent, `opsagent tools call` and the Slack bot all use, and one function checks
that every configured backend answers, with a clear message per failure. Both iterate the configured families
(`ToolFamily`), in the catalogue's order, and import only each family's public face, never its inner modules.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from datetime import datetime
from typing import TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from kernel import ToolRegistry
from opsagent_tools.actions import ActionJournal, ActionsFamily, ActionsSettings
from opsagent_tools.changes import ChangesFamily, ChangesSettings
from opsagent_tools.check_result import CheckResult
from opsagent_tools.discovery import DiscoveryFamily, DiscoverySettings
from opsagent_tools.family import ToolFamily
from opsagent_tools.kubernetes import KubeApi, KubernetesFamily, KubernetesSettings
from opsagent_tools.links import LinkSettings
from opsagent_tools.logs import LogsFamily, LogsSettings
from opsagent_tools.mcp import McpConnections, McpSettings
from opsagent_tools.memory import IncidentMemory, MemoryFamily
from opsagent_tools.metrics import MetricsFamily, MetricsSettings
from opsagent_tools.repos import RepoSettings, ReposFamily
from opsagent_tools.runbooks import RunbookLibrary, RunbooksFamily
from opsagent_tools.time_words import utc_now

Clock = Callable[[], datetime]
S = TypeVar("S")


class ToolsSettings(BaseModel):
    """The `[tools.metrics]`, `[tools.logs]`, `[tools.repos]`, `[tools.kubernetes]`, `[tools.changes]`,
    `[tools.actions]` and `[tools.mcp]` sections; each one left out disables its tools. `[tools.discover]` tunes
    `discover`, which lists what the metric and log backends and the cluster hold."""

    model_config = ConfigDict(extra="forbid")

    metrics: MetricsSettings | None = None
    """`url` is a Prometheus-compatible base URL, or `file:///path/series.jsonl` for recorded series."""
    logs: LogsSettings | None = None
    repos: RepoSettings | None = None
    kubernetes: KubernetesSettings | None = None
    """Read-only cluster access: an allowlist of namespaces, a kubeconfig context or the pod's service account."""
    changes: ChangesSettings | None = None
    """`recent_changes`, one timeline read from the backends of the sections above."""
    actions: ActionsSettings | None = None
    mcp: McpSettings | None = None
    """`[tools.mcp.servers.<name>]`: MCP servers whose tools join the catalogue (connected by `McpConnections`)."""
    discover: DiscoverySettings = Field(default_factory=DiscoverySettings)
    always: list[str] = Field(default_factory=list)
    """Tools whose schemas every turn offers, whatever the task (`[tools] always = ["search_logs"]`); the others
    come as the task needs them: those it matches best from the first turn, the rest when the model loads them."""
    recorded_at: AwareDatetime | None = None
    """For backends that are a recording (the demo's, a recorded incident): when it ends, which the tools take as
    "now". Left out for live backends: the tools read the clock."""

    def clock(self) -> Clock:
        """The tools' "now": the recording's end when there is one, else the wall clock."""
        recorded = self.recorded_at
        return (lambda: recorded) if recorded is not None else utc_now


def build_tools(
    settings: ToolsSettings,
    *,
    runbooks: RunbookLibrary | None = None,
    environ: Mapping[str, str] = os.environ,
    now: Clock | None = None,
    journal: ActionJournal | None = None,
    previews_only: bool = False,
    mcp: McpConnections | None = None,
    kube: KubeApi | None = None,
    memory: IncidentMemory | None = None,
    links: LinkSettings | None = None,
) -> ToolRegistry:
    """Every tool the configuration enables. A missing secret or unreadable backend raises ValueError now,
    at start-up, rather than in the middle of an incident. `runbooks` adds the runbook tools over that library
    (the one whose runbooks are named at the start of runs); `journal` records side effects (the bot's run
    store makes them exactly-once across restarts; by default, within this process). `previews_only`: the
    policy never sends an action (read_only, dry_run), so the action webhook needs no signing secret. `now`
    replaces the tools' clock (a replay pins the recorded one). `mcp`, once entered, adds the tools of the MCP
    servers that started (without it, `[tools.mcp]` adds none). `kube` replaces the cluster `[tools.kubernetes]`
    names (the evaluation's, which is never called). `memory` adds `similar_incidents` over those past incidents
    (the bot's run store). `links` (`[links]`) says where people see each observation at its source; by default
    Prometheus' and GitHub's own pages, from the URLs above without credentials."""
    clock = now or settings.clock()
    knowledge = [*_each(runbooks, RunbooksFamily), *_each(memory, lambda given: MemoryFamily(given, now=clock))]
    families = configured_families(
        settings,
        environ=environ,
        now=clock,
        links=links or LinkSettings(),
        knowledge=knowledge,
        journal=journal,
        previews_only=previews_only,
        kube=kube,
        mcp=mcp,
    )
    pinned = set(settings.always)
    registry = ToolRegistry(
        dataclasses.replace(
            tool,
            keywords=(*tool.keywords, *family.keywords),
            family=type(family).__name__,
            always=tool.name in pinned,
        )
        for family in families
        for tool in family.tools()
    )
    # An MCP tool (`<server>__<tool>`) may be missing because its server did not start: that stops nothing.
    if unknown := sorted(name for name in pinned - set(registry.names()) if "__" not in name):
        raise ValueError(
            f"[tools] always names {', '.join(map(repr, unknown))}, which this configuration does not offer: "
            f"use names that `opsagent tools list` shows ({', '.join(registry.names())})"
        )
    return registry


async def check_backends(
    settings: ToolsSettings,
    *,
    runbooks: RunbookLibrary | None = None,
    environ: Mapping[str, str] = os.environ,
    previews_only: bool = False,
) -> list[CheckResult]:
    """Read the runbooks, reach each configured backend once and start the MCP servers; never raises, one result
    per backend (and one per runbook that cannot be read, one per MCP server; `previews_only` as for
    `build_tools`). The runbooks come first, then the families in the catalogue's order."""
    families = [
        *_each(runbooks, RunbooksFamily),
        *configured_families(
            settings,
            environ=environ,
            now=settings.clock(),
            links=LinkSettings(),
            previews_only=previews_only,
            mcp=McpConnections(settings.mcp, environ),
        ),
    ]
    results: list[CheckResult] = []
    async with AsyncExitStack() as held:
        for family in families:
            if isinstance(family, AbstractAsyncContextManager):  # it holds connections: started for the check
                await held.enter_async_context(family)
        for family in families:
            results += await family.check()
    return results


def configured_families(
    settings: ToolsSettings,
    *,
    environ: Mapping[str, str],
    now: Clock,
    links: LinkSettings,
    knowledge: Sequence[ToolFamily] = (),
    journal: ActionJournal | None = None,
    previews_only: bool = False,
    kube: KubeApi | None = None,
    mcp: McpConnections | None = None,
) -> list[ToolFamily]:
    """The families the configuration names, in the catalogue's order (the order the model has always read them
    in): the backends read, the change timeline over them, `knowledge` (runbooks and the memory), `discover` over
    all of these, the actions, then the MCP servers (`mcp`, entered or not). Nothing is reached yet: each family
    sets up its backend when its tools are built or checked."""
    reads: list[ToolFamily] = [
        *_each(settings.metrics, lambda metrics: MetricsFamily(metrics, now=now, links=links)),
        *_each(settings.logs, lambda logs: LogsFamily(logs, environ=environ, now=now, links=links)),
        *_each(settings.repos, lambda repos: ReposFamily(repos, links=links)),
        *_each(
            settings.kubernetes,
            lambda cluster: KubernetesFamily(cluster, environ=environ, now=now, api=kube),
        ),
    ]
    families = [*reads, *_each(settings.changes, lambda changes: ChangesFamily(changes, reads, now=now)), *knowledge]
    families.append(DiscoveryFamily(settings.discover, list(families)))
    families += _each(
        settings.actions,
        lambda actions: ActionsFamily(actions, environ=environ, journal=journal, previews_only=previews_only),
    )
    return families if mcp is None else [*families, mcp]


def _each(section: S | None, family: Callable[[S], ToolFamily]) -> list[ToolFamily]:
    """The family made of `section`, or none when the section is left out."""
    return [family(section)] if section is not None else []
