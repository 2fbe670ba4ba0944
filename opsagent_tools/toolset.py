"""The configured tool set: which tools exist is decided by which backends the configuration names.

One function builds the registry the agent, `opsagent tools call` and the Slack bot all use, and
one function checks that every configured backend answers, with a clear message per failure.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from kernel import ToolFailure, ToolRegistry
from opsagent_tools.actions import ActionJournal, ActionWebhook, ActionWebhookSettings, action_tools
from opsagent_tools.changes import ChangesSettings, change_sources, check_changes, recent_changes_tool
from opsagent_tools.changes.timeline import ChangeSource
from opsagent_tools.kubernetes import KubeApi, KubernetesSettings, check_kubernetes, kubernetes_tools
from opsagent_tools.logs import LogQuery, LogsSettings, build_backend, log_tools
from opsagent_tools.metrics import MetricsSettings, metrics_tools
from opsagent_tools.metrics.files import FileMetricsClient
from opsagent_tools.metrics.prometheus import PrometheusClient
from opsagent_tools.repos import RepoBackend, RepoSettings, build_backends, repo_tools

Clock = Callable[[], datetime]
CHECK_SERVICE = "opsagent-check"
"""A service name no one uses: a log search for it proves the backend answers without reading real logs."""


class ActionsSettings(BaseModel):
    """Side-effect actions; absent means the agent has no side-effect tools at all."""

    model_config = ConfigDict(extra="forbid")

    webhook: ActionWebhookSettings


class ToolsSettings(BaseModel):
    """The `[metrics]`, `[logs]`, `[repos]`, `[kubernetes]`, `[changes]` and `[actions]` sections; each one left out
    disables its tools."""

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


def metrics_client(settings: MetricsSettings) -> PrometheusClient | FileMetricsClient:
    """The metrics backend the URL names: recorded series for `file://`, else the Prometheus HTTP API."""
    url = urlsplit(settings.url)
    if url.scheme == "file":
        return FileMetricsClient(Path(url.path))
    return PrometheusClient(base_url=settings.url, timeout=settings.timeout_s, headers=settings.headers)


def build_tools(
    settings: ToolsSettings,
    *,
    environ: Mapping[str, str] = os.environ,
    now: Clock | None = None,
    journal: ActionJournal | None = None,
) -> ToolRegistry:
    """Every tool the configuration enables. A missing secret or unreadable backend raises ValueError now,
    at start-up, rather than in the middle of an incident. `journal` records side effects (the bot's run
    store makes them exactly-once across restarts; by default, within this process)."""
    registry = ToolRegistry()
    metrics = metrics_client(settings.metrics) if settings.metrics is not None else None
    kube = KubeApi.from_settings(settings.kubernetes, environ) if settings.kubernetes is not None else None
    if settings.metrics is not None:
        for tool in metrics_tools(settings.metrics, client=metrics, now=now):
            registry.add(tool)
    if settings.logs is not None:
        log_options = {"now": now} if now is not None else {}
        for tool in log_tools(settings.logs, backend=build_backend(settings.logs, environ), **log_options):
            registry.add(tool)
    if settings.repos is not None:
        for tool in repo_tools(settings.repos):
            registry.add(tool)
    if settings.kubernetes is not None:
        kube_options = {"now": now} if now is not None else {}
        for tool in kubernetes_tools(settings.kubernetes, api=kube, environ=environ, **kube_options):
            registry.add(tool)
    if settings.changes is not None:
        sources = _change_sources(settings.changes, settings, metrics, kube)
        registry.add(recent_changes_tool(settings.changes, sources, now=now))
    if settings.actions is not None:
        for tool in action_tools(ActionWebhook.from_env(settings.actions.webhook, environ, journal=journal)):
            registry.add(tool)
    return registry


@dataclass(frozen=True)
class CheckResult:
    """One backend's answer to `opsagent check`."""

    name: str
    ok: bool
    message: str


async def check_backends(settings: ToolsSettings, *, environ: Mapping[str, str] = os.environ) -> list[CheckResult]:
    """Reach each configured backend once; never raises, one result per backend."""
    results: list[CheckResult] = []
    if settings.metrics is not None:
        results.append(await _probe("metrics", _check_metrics(settings.metrics)))
    if settings.logs is not None:
        results.append(await _probe(f"logs ({settings.logs.backend})", _check_logs(settings.logs, environ)))
    if settings.repos is not None:
        for name, backend in build_backends(settings.repos).items():
            results.append(await _probe(f"repo {name}", _check_repo(backend)))
    if settings.kubernetes is not None:
        results.append(await _probe("kubernetes", check_kubernetes(settings.kubernetes, environ)))
    if settings.changes is not None:
        results.append(await _probe("changes", _check_changes(settings.changes, settings, environ)))
    if settings.actions is not None:
        results.append(_check_actions(settings.actions, environ))
    return results


def _change_sources(
    changes: ChangesSettings,
    settings: ToolsSettings,
    metrics: PrometheusClient | FileMetricsClient | None,
    kube: KubeApi | None,
) -> list[ChangeSource]:
    """The timeline's sources over the backends the other sections configure."""
    return change_sources(
        changes,
        kube=kube,
        repos=settings.repos,
        backends=build_backends(settings.repos) if settings.repos is not None else None,
        metrics=settings.metrics,
        metrics_client=metrics,
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


async def _check_metrics(settings: MetricsSettings) -> str:
    client = metrics_client(settings)
    end = datetime.now(UTC)
    services = await client.label_values(settings.service_label, start=end - timedelta(hours=6), end=end)
    if not services:
        return f"reachable, but no series carry the label '{settings.service_label}' in the last 6 h: check metrics.service_label"
    return f"reachable; {len(services)} services: {', '.join(services[:8])}{' …' if len(services) > 8 else ''}"


async def _check_logs(settings: LogsSettings, environ: Mapping[str, str]) -> str:
    backend = build_backend(settings, environ)
    end = datetime.now(UTC)
    probe = LogQuery(service=CHECK_SERVICE, since=end - timedelta(minutes=15), until=end, level=None, query="", limit=1)
    result = await backend.search(probe)
    services = f"; services seen: {', '.join(result.services[:8])}" if result.services else ""
    return f"reachable ({result.total} lines for the probe service '{CHECK_SERVICE}'){services}"


async def _check_repo(backend: RepoBackend) -> str:
    listing = await backend.list_dir("", "HEAD")
    return f"readable at HEAD ({len(listing.entries)} entries at the root)"


def _check_actions(settings: ActionsSettings, environ: Mapping[str, str]) -> CheckResult:
    try:
        ActionWebhook.from_env(settings.webhook, environ)
    except ValueError as exc:
        return CheckResult("actions", False, str(exc))
    return CheckResult("actions", True, f"webhook {settings.webhook.url}, signing secret present (not called by check)")
