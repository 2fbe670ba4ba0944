"""The configured tool set: which tools exist is decided by which backends the configuration names.

One function builds the registry the agent, `opsagent tools call` and the Slack bot all use, and
one function checks that every configured backend answers, with a clear message per failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from kernel import ToolRegistry
from opsagent_tools.actions import ActionJournal, ActionsSettings, ActionWebhook, action_tools
from opsagent_tools.actions.check import check_actions
from opsagent_tools.changes import ChangeSource, ChangesSettings, check_changes, recent_changes_tool
from opsagent_tools.check_result import CheckResult, probe
from opsagent_tools.discovery import DiscoverySettings, DiscoverySource, discover_tool
from opsagent_tools.kubernetes import KubeApi, KubernetesSettings, check_kubernetes, kubernetes_tools
from opsagent_tools.kubernetes.changes import change_sources as kubernetes_change_sources
from opsagent_tools.kubernetes.discovery import KubernetesDiscovery
from opsagent_tools.links import LinkSettings
from opsagent_tools.logs import LogsSettings, build_backend, log_tools
from opsagent_tools.logs.check import check_logs
from opsagent_tools.logs.discovery import log_discovery
from opsagent_tools.mcp import McpConnections, McpSettings
from opsagent_tools.memory import IncidentMemory, similar_incidents_tool
from opsagent_tools.metrics import MetricsSettings, metrics_tools
from opsagent_tools.metrics.changes import change_sources as metrics_change_sources
from opsagent_tools.metrics.check import check_metrics
from opsagent_tools.metrics.client import MetricsClient, metrics_client
from opsagent_tools.metrics.discovery import PrometheusDiscovery
from opsagent_tools.metrics.links import MetricLinks
from opsagent_tools.repos import RepoSettings, build_backends, repo_tools
from opsagent_tools.repos.changes import change_sources as repo_change_sources
from opsagent_tools.repos.check import check_repo
from opsagent_tools.runbooks import RunbookLibrary, runbook_tools
from opsagent_tools.runbooks.check import check_runbooks
from opsagent_tools.time_words import utc_now

Clock = Callable[[], datetime]


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
    registry = ToolRegistry()
    links = links or LinkSettings()
    now = now or settings.clock()
    lookback = timedelta(seconds=settings.discover.lookback_s)
    sources: list[DiscoverySource] = []
    metrics: MetricsClient | None = None
    if kube is None and settings.kubernetes is not None:
        kube = KubeApi.from_settings(settings.kubernetes, environ)
    if settings.metrics is not None:
        metrics = metrics_client(settings.metrics)
        for tool in metrics_tools(settings.metrics, client=metrics, now=now, links=links):
            registry.add(tool)
        sources.append(PrometheusDiscovery(metrics, settings.metrics, now, lookback))
    if settings.logs is not None:
        backend = build_backend(settings.logs, environ)
        for tool in log_tools(settings.logs, backend=backend, now=now, links=links):
            registry.add(tool)
        if (source := log_discovery(settings.logs, backend, now, lookback)) is not None:
            sources.append(source)
    if settings.repos is not None:
        for tool in repo_tools(settings.repos, links):
            registry.add(tool)
    if settings.kubernetes is not None:
        for tool in kubernetes_tools(settings.kubernetes, api=kube, environ=environ, now=now):
            registry.add(tool)
        if kube is not None:
            sources.append(KubernetesDiscovery(kube))
    if settings.changes is not None:
        changes = _change_sources(settings.changes, settings, metrics, kube, links)
        registry.add(recent_changes_tool(settings.changes, changes, now=now))
    if runbooks is not None:
        for tool in runbook_tools(runbooks):
            registry.add(tool)
    if memory is not None:
        registry.add(similar_incidents_tool(memory, now=now))
    if (discover := discover_tool(sources, settings.discover)) is not None:
        registry.add(discover)
    if settings.actions is not None:
        webhook = ActionWebhook.from_env(
            settings.actions.webhook, environ, journal=journal, previews_only=previews_only
        )
        for tool in action_tools(webhook):
            registry.add(tool)
    for tool in mcp.tools() if mcp is not None else ():
        registry.add(tool)
    return registry


async def check_backends(
    settings: ToolsSettings,
    *,
    runbooks: RunbookLibrary | None = None,
    environ: Mapping[str, str] = os.environ,
    previews_only: bool = False,
) -> list[CheckResult]:
    """Reach each configured backend once, read the runbooks and start the MCP servers; never raises, one result
    per backend (and one per runbook that cannot be read, one per MCP server; `previews_only` as for
    `build_tools`)."""
    results: list[CheckResult] = []
    if runbooks is not None:
        results += await check_runbooks(runbooks)
    end = settings.clock()()
    if (metrics := settings.metrics) is not None:
        results.append(await probe("metrics", lambda: check_metrics(metrics_client(metrics), metrics, end)))
    if (logs := settings.logs) is not None:
        results.append(await probe(f"logs ({logs.backend})", lambda: check_logs(build_backend(logs, environ), end)))
    if settings.repos is not None:
        for name, backend in build_backends(settings.repos).items():
            results.append(await probe(f"repo {name}", lambda backend=backend: check_repo(backend)))
    if (kubernetes := settings.kubernetes) is not None:
        results.append(await probe("kubernetes", lambda: check_kubernetes(kubernetes, environ)))
    if (changes := settings.changes) is not None:
        results.append(await probe("changes", lambda: _check_changes(changes, settings, environ)))
    if settings.actions is not None:
        results.append(check_actions(settings.actions, environ, previews_only=previews_only))
    if settings.mcp is not None:
        async with McpConnections(settings.mcp, environ) as mcp:
            results += mcp.report()
    return results


def _change_sources(
    changes: ChangesSettings,
    settings: ToolsSettings,
    metrics: MetricsClient | None,
    kube: KubeApi | None,
    links: LinkSettings | None = None,
) -> list[ChangeSource]:
    """The timeline's sources over the backends the other sections configure."""
    sources: list[ChangeSource] = []
    if settings.metrics is not None and metrics is not None:
        graphs = MetricLinks(links or LinkSettings(), settings.metrics.url)
        sources += metrics_change_sources(changes, metrics, settings.metrics, graphs)
    if kube is not None:
        sources += kubernetes_change_sources(changes, kube)
    if settings.repos is not None:
        sources += repo_change_sources(changes, settings.repos, build_backends(settings.repos))
    return sources


async def _check_changes(changes: ChangesSettings, settings: ToolsSettings, environ: Mapping[str, str]) -> str:
    metrics = metrics_client(settings.metrics) if settings.metrics is not None else None
    kube = KubeApi.from_settings(settings.kubernetes, environ) if settings.kubernetes is not None else None
    return await check_changes(_change_sources(changes, settings, metrics, kube), utc_now())
