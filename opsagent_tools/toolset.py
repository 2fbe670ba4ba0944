"""The configured tool set: which tools exist is decided by which backends the configuration names.

One function builds the registry the agent, `opsagent tools call` and the Slack bot all use, and
one function checks that every configured backend answers, with a clear message per failure.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from kernel import ToolFailure, ToolRegistry
from opsagent_tools.actions import ActionJournal, ActionWebhook, ActionWebhookSettings, action_tools
from opsagent_tools.changes import ChangesSettings, change_sources, check_changes, recent_changes_tool
from opsagent_tools.changes.timeline import ChangeSource
from opsagent_tools.check_result import CheckResult
from opsagent_tools.discovery import DiscoverySettings, DiscoverySource, discover_tool
from opsagent_tools.kubernetes import KubeApi, KubernetesSettings, check_kubernetes, kubernetes_tools
from opsagent_tools.kubernetes.discovery import KubernetesDiscovery
from opsagent_tools.links import LinkSettings
from opsagent_tools.logs import LogQuery, LogsSettings, build_backend, log_tools
from opsagent_tools.logs.discovery import log_discovery
from opsagent_tools.mcp import McpConnections, McpSettings
from opsagent_tools.memory import IncidentMemory, similar_incidents_tool
from opsagent_tools.metrics import MetricsSettings, metrics_tools
from opsagent_tools.metrics.discovery import PrometheusDiscovery
from opsagent_tools.metrics.files import FileMetricsClient
from opsagent_tools.metrics.prometheus import PrometheusClient
from opsagent_tools.repos import RepoBackend, RepoSettings, build_backends, repo_tools
from opsagent_tools.runbooks import RunbookLibrary, runbook_tools
from opsagent_tools.time_words import utc_now

Clock = Callable[[], datetime]
CHECK_SERVICE = "opsagent-check"
"""A service name no one uses: a log search for it proves the backend answers without reading real logs."""


class ActionsSettings(BaseModel):
    """Side-effect actions; absent means the agent has no side-effect tools at all."""

    model_config = ConfigDict(extra="forbid")

    webhook: ActionWebhookSettings


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


def metrics_client(settings: MetricsSettings) -> PrometheusClient | FileMetricsClient:
    """The metrics backend the URL names: recorded series for `file://`, else the Prometheus HTTP API."""
    url = urlsplit(settings.url)
    if url.scheme == "file":
        return FileMetricsClient(Path(url.path))
    return PrometheusClient(base_url=settings.url, timeout=settings.timeout_s, headers=settings.headers)


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
    metrics: PrometheusClient | FileMetricsClient | None = None
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
    if settings.metrics is not None:
        results.append(await _probe("metrics", _check_metrics(settings.metrics, end)))
    if settings.logs is not None:
        results.append(await _probe(f"logs ({settings.logs.backend})", _check_logs(settings.logs, environ, end)))
    if settings.repos is not None:
        for name, backend in build_backends(settings.repos).items():
            results.append(await _probe(f"repo {name}", _check_repo(backend)))
    if settings.kubernetes is not None:
        results.append(await _probe("kubernetes", check_kubernetes(settings.kubernetes, environ)))
    if settings.changes is not None:
        results.append(await _probe("changes", _check_changes(settings.changes, settings, environ)))
    if settings.actions is not None:
        results.append(_check_actions(settings.actions, environ, previews_only=previews_only))
    if settings.mcp is not None:
        async with McpConnections(settings.mcp, environ) as mcp:
            results += mcp.report()
    return results


async def check_runbooks(library: RunbookLibrary) -> list[CheckResult]:
    """The runbooks read now: how many, from where, the last sync; then one failure per runbook skipped."""
    status = await library.refresh()
    results = [CheckResult("runbooks", status.error is None and status.loaded_at is not None, status.describe())]
    return results + [CheckResult(f"runbook {skipped.path}", False, skipped.problem) for skipped in status.skipped]


def _change_sources(
    changes: ChangesSettings,
    settings: ToolsSettings,
    metrics: PrometheusClient | FileMetricsClient | None,
    kube: KubeApi | None,
    links: LinkSettings | None = None,
) -> list[ChangeSource]:
    """The timeline's sources over the backends the other sections configure."""
    return change_sources(
        changes,
        kube=kube,
        repos=settings.repos,
        backends=build_backends(settings.repos) if settings.repos is not None else None,
        metrics=settings.metrics,
        metrics_client=metrics,
        links=links,
    )


async def _check_changes(changes: ChangesSettings, settings: ToolsSettings, environ: Mapping[str, str]) -> str:
    metrics = metrics_client(settings.metrics) if settings.metrics is not None else None
    kube = KubeApi.from_settings(settings.kubernetes, environ) if settings.kubernetes is not None else None
    return await check_changes(_change_sources(changes, settings, metrics, kube))


async def _probe(name: str, check: Awaitable[str]) -> CheckResult:
    try:
        message = await check
    except (ToolFailure, ValueError, OSError) as exc:
        return CheckResult(name, False, str(exc))
    return CheckResult(name, True, message)


async def _check_metrics(settings: MetricsSettings, end: datetime) -> str:
    client = metrics_client(settings)
    services = await client.label_values(settings.service_label, start=end - timedelta(hours=6), end=end)
    if not services:
        return f"reachable, but no series carry the label '{settings.service_label}' in the last 6 h: check tools.metrics.service_label"
    return f"reachable; {len(services)} services: {', '.join(services[:8])}{' …' if len(services) > 8 else ''}"


async def _check_logs(settings: LogsSettings, environ: Mapping[str, str], end: datetime) -> str:
    backend = build_backend(settings, environ)
    probe = LogQuery(service=CHECK_SERVICE, since=end - timedelta(minutes=15), until=end, level=None, query="", limit=1)
    result = await backend.search(probe)
    services = f"; services seen: {', '.join(result.services[:8])}" if result.services else ""
    return f"reachable ({result.total} lines for the probe service '{CHECK_SERVICE}'){services}"


async def _check_repo(backend: RepoBackend) -> str:
    listing = await backend.list_dir("", "HEAD")
    return f"readable at HEAD ({len(listing.entries)} entries at the root)"


def _check_actions(settings: ActionsSettings, environ: Mapping[str, str], *, previews_only: bool) -> CheckResult:
    webhook = settings.webhook
    if previews_only and not environ.get(webhook.secret_env):
        return CheckResult(
            "actions", True, f"webhook {webhook.url}: previews only (the policy sends nothing), no secret needed"
        )
    try:
        ActionWebhook.from_env(webhook, environ)
    except ValueError as exc:
        return CheckResult("actions", False, str(exc))
    return CheckResult("actions", True, f"webhook {webhook.url}, signing secret present (not called by check)")
