"""`recent_changes`: the sources the configuration allows, read at once, as one timeline; and its `opsagent check`.

Every source reads a backend built for another section (the cluster, the repositories, Prometheus); none is required.
"""

# No `from __future__ import annotations`: the tool's argument descriptions are built at run time.

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Annotated

from pydantic import Field

from kernel import Tool, ToolOutput, tool_from_function
from opsagent_tools.changes.prometheus import AlertChanges, VersionChanges
from opsagent_tools.changes.repos import GitHubChanges, RefChanges, service_names
from opsagent_tools.changes.rollouts import RolloutChanges
from opsagent_tools.changes.settings import ChangesSettings
from opsagent_tools.changes.timeline import ChangeQuery, ChangeSource, read_sources, timeline_output
from opsagent_tools.kubernetes import KubeApi
from opsagent_tools.links import LinkSettings
from opsagent_tools.metrics import MetricsSettings
from opsagent_tools.metrics.client import MetricsClient
from opsagent_tools.metrics.links import MetricLinks
from opsagent_tools.repos import RepoBackend, RepoSettings
from opsagent_tools.repos.github import GitHubRepo
from opsagent_tools.time_words import format_span, utc_now, window_seconds

DEFAULT_WINDOW = "2h"
TOOL_MARGIN_S = 5.0
"""The tool's timeout beyond its sources' budget: time to merge and render what they found."""
CHECK_LOOKBACK = timedelta(hours=6)
NO_SOURCES = (
    "tools.changes is configured, but none of its sources is: it reads [tools.kubernetes], [tools.repos] and "
    "[tools.metrics] (and may turn each off); configure one of them, or drop [tools.changes]"
)


def change_sources(
    settings: ChangesSettings,
    *,
    kube: KubeApi | None = None,
    repos: RepoSettings | None = None,
    backends: Mapping[str, RepoBackend] | None = None,
    metrics: MetricsSettings | None = None,
    metrics_client: MetricsClient | None = None,
    links: LinkSettings | None = None,
) -> list[ChangeSource]:
    """The sources the configured backends offer and `settings` leave on, in the timeline's order of kinds; `links`
    says where people see Prometheus' changes (by default its graph page at the metrics URL, without credentials)."""
    sources: list[ChangeSource] = []
    if metrics is not None and metrics_client is not None:
        graphs = MetricLinks(links or LinkSettings(), metrics.url)
        if settings.alerts:
            sources.append(AlertChanges(metrics_client, metrics.service_label, graphs))
        if settings.build_info_metric:
            sources.append(
                VersionChanges(
                    metrics_client,
                    metric=settings.build_info_metric,
                    version_label=settings.version_label,
                    service_label=metrics.service_label,
                    links=graphs,
                )
            )
    if kube is not None and settings.kubernetes:
        sources.append(RolloutChanges(kube, settings.deployment_labels))
    if repos is not None and backends is not None:
        for name, backend in backends.items():
            services = service_names(name, repos.services)
            if settings.github and isinstance(backend, GitHubRepo):
                sources.append(GitHubChanges(backend, services, settings.github_environments))
            if settings.repos:
                sources.append(RefChanges(backend, services))
    return sources


def recent_changes_tool(
    settings: ChangesSettings,
    sources: Sequence[ChangeSource],
    *,
    now: Callable[[], datetime] | None = None,
) -> Tool:
    """The `recent_changes` tool over `sources`; `now` fixes the clock in tests. Without a source, a ValueError
    now, at start-up: a timeline that can only ever be empty would mislead."""
    if not sources:
        raise ValueError(NO_SOURCES)
    clock = now or utc_now
    offered = ", ".join(source.what for source in sources)

    async def recent_changes(
        service: Annotated[
            str | None,
            Field(
                description="The service, as its deployment, repository or metrics name it, e.g. order-service; "
                "leave out for every service (when the cause may be a dependency)."
            ),
        ] = None,
        window: Annotated[
            str, Field(description="How far back from now: 30m, 2h (default), 1d … up to 7d. Start wide.")
        ] = DEFAULT_WINDOW,
    ) -> ToolOutput:
        end = clock()
        wanted = service.strip() if service and service.strip() else None
        query = ChangeQuery(wanted, end - timedelta(seconds=window_seconds(window)), end)
        chosen = [source for source in sources if source.about(wanted)]
        skipped = [source.name for source in sources if not source.about(wanted)]
        outcomes = await read_sources(chosen, query, settings.timeout_s)
        return timeline_output(query, outcomes, skipped, max_entries=settings.max_entries)

    recent_changes.__doc__ = f"""See what changed around the incident: one timeline, newest first, merged from
    every configured source ({offered}). Use it EARLY, right after confirming the symptom and when it started: a
    change just before the onset is the first suspect, then compare_refs or k8s_rollout_history shows it in full.
    Each line is when (t-12m is 12 minutes before now), the source, what changed (an image or a memory limit, a
    version, a tag or merge, a deployment, an alert that fired) and a link when there is one.
    Pitfalls: a change near the onset can be a coincidence (check that the errors fit it); a source listed as not
    read is unknown, not empty; no change at all points to load, a dependency or the infrastructure."""

    return tool_from_function(
        recent_changes,
        timeout=settings.timeout_s + TOOL_MARGIN_S,
        returns="a head line with the counts, sources that could not be read, one line per change "
        "('t-12m kubernetes: deployment/x in shop: revision 7 … rolled out: app image a → b'), then what was checked",
    )


async def check_changes(sources: Sequence[ChangeSource]) -> str:
    """What `recent_changes` reads, as one line; the version metric is looked up, since its name is a guess."""
    if not sources:
        raise ValueError(NO_SOURCES)
    parts = [source.name for source in sources]
    end = utc_now()
    for source in sources:
        if isinstance(source, VersionChanges):
            names = await source.metric_names(end - CHECK_LOOKBACK, end)
            lookback = format_span(CHECK_LOOKBACK.total_seconds())
            parts[parts.index(source.name)] += (
                f" ({', '.join(names[:5])}{' …' if len(names) > 5 else ''})"
                if names
                else f" (no series named like {source.metric} in the last {lookback}, so no versions will show: "
                'set tools.changes.build_info_metric, or "" to leave versions out)'
            )
    return "sources: " + "; ".join(parts)
