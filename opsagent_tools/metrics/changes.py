"""Changes Prometheus saw: a build-info metric taking a new version label, and alerts that fired, in one range query each.

A version change is a new label value, so a new series: `changes()` counts value changes within one series, and a
build-info series is always 1, so it would see none. Plain selectors, so recorded metrics (`file://`) answer too.
Alerts come from the ALERTS series rather than Alertmanager, whose API holds only the alerts active now.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

from opsagent_tools.changes import Change, ChangeQuery, ChangeSource, ChangesSettings, SourceKind, SourceResult
from opsagent_tools.metrics.client import MetricsClient
from opsagent_tools.metrics.links import MetricLinks
from opsagent_tools.metrics.series import Series, format_labels
from opsagent_tools.metrics.settings import METRIC_NAME, MetricsSettings
from opsagent_tools.metrics.tools import NICE_STEPS_S, promql_string
from opsagent_tools.time_words import format_span, relative_time

POINTS_PER_WINDOW = 240
"""The range queries' resolution: a change is placed within window/240 (15 s over an hour, 30 s over two)."""
PER_INSTANCE_LABELS = ("instance", "pod", "pod_name", "container_id")
"""Labels that tell the replicas of one service apart; they do not make another service."""
CHECK_LOOKBACK = timedelta(hours=6)
"""How far back `opsagent check` looks for the version metric."""
NAMES_SHOWN = 5


def change_sources(
    settings: ChangesSettings, client: MetricsClient, metrics: MetricsSettings, links: MetricLinks
) -> list[ChangeSource]:
    """What Prometheus adds to the timeline, as far as `settings` leave it on: the alerts that fired, then the
    versions of the build-info metric; `links` says where people see each query."""
    sources: list[ChangeSource] = []
    if settings.alerts:
        sources.append(AlertChanges(client, metrics.service_label, links))
    if settings.build_info_metric:
        sources.append(
            VersionChanges(
                client,
                metric=settings.build_info_metric,
                version_label=settings.version_label,
                service_label=metrics.service_label,
                links=links,
            )
        )
    return sources


def grid_step(window_s: float) -> float:
    """The round step that gives about `POINTS_PER_WINDOW` points over the window (at least 15 s)."""
    wanted = window_s / POINTS_PER_WINDOW
    return float(next((s for s in NICE_STEPS_S if s >= wanted), NICE_STEPS_S[-1]))


def runs(times: list[float], step: float) -> list[tuple[float, float]]:
    """Sorted grid times as (first, last) of each unbroken run: a gap of more than one step ends a run."""
    found: list[tuple[float, float]] = []
    for t in sorted(times):
        if found and t - found[-1][1] <= 1.5 * step:
            found[-1] = (found[-1][0], t)
        else:
            found.append((t, t))
    return found


def selector(name: str, matchers: dict[str, str]) -> str:
    """A plain selector: app_build_info{service="order-service"} for a name, {__name__=~".+_build_info",…} for a
    pattern of names (values escaped)."""
    terms = [f'{label}="{promql_string(value)}"' for label, value in matchers.items()]
    if METRIC_NAME.fullmatch(name):
        return name + ("{" + ",".join(terms) + "}" if terms else "")
    return "{" + ",".join([f'__name__=~"{name}"', *terms]) + "}"


class _RangeSource:
    """What both Prometheus sources share: the client, the service label, and a link to the query for people."""

    def __init__(self, client: MetricsClient, service_label: str, links: MetricLinks | None) -> None:
        self.client, self.service_label, self.links = client, service_label, links

    def about(self, service: str | None) -> bool:
        return True  # series are matched on the service label in the query

    async def check(self, end: datetime) -> str:
        return self.name

    async def series(self, promql: str, query: ChangeQuery) -> tuple[list[Series], float]:
        step = grid_step(query.until.timestamp() - query.since.timestamp())
        return [s for s in await self.client.query_range(promql, query.since, query.until, step) if s.points], step

    def link(self, promql: str, query: ChangeQuery) -> str | None:
        graph = self.links.graph(promql, query.since, query.until) if self.links is not None else None
        return graph.url if graph is not None else None

    def matchers(self, query: ChangeQuery, **fixed: str) -> dict[str, str]:
        return fixed | ({self.service_label: query.service} if query.service else {})


class VersionChanges(_RangeSource):
    """A new value of the version label on a build-info metric: one change per service each time a version appears."""

    name = "prometheus versions"
    kind = SourceKind.PROMETHEUS

    def __init__(
        self, client: MetricsClient, *, metric: str, version_label: str, service_label: str, links: MetricLinks | None
    ) -> None:
        super().__init__(client, service_label, links)
        self.metric, self.version_label = metric, version_label
        self.what = f"version changes of {metric}{{{version_label}}} in Prometheus"

    async def check(self, end: datetime) -> str:
        """Its name, with the metric names the build-info setting finds (a guess until checked), or that none."""
        start = end - CHECK_LOOKBACK
        names = await self.client.label_values("__name__", selector(self.metric, {}), start=start, end=end)
        if names:
            return f"{self.name} ({', '.join(names[:NAMES_SHOWN])}{' …' if len(names) > NAMES_SHOWN else ''})"
        return (
            f"{self.name} (no series named like {self.metric} in the last {format_span(CHECK_LOOKBACK.total_seconds())}, "
            'so no versions will show: set tools.changes.build_info_metric, or "" to leave versions out)'
        )

    async def read(self, query: ChangeQuery) -> SourceResult:
        promql = selector(self.metric, self.matchers(query))
        found, step = await self.series(promql, query)
        seen: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for series in found:
            version = series.labels.get(self.version_label)
            if version is not None:
                seen[self._whose(series)][version] += [t for t, _ in series.points]
        start, link = query.since.timestamp(), self.link(promql, query)
        changes = []
        for (who, metric), versions in seen.items():
            for version, times in versions.items():
                for first, _ in runs(times, step):
                    if first <= start + step / 2:
                        continue  # already there when the window began
                    before = sorted(v for v, ts in versions.items() if v != version and _present(ts, first - step))
                    what = f"version {', '.join(before)} → {version}" if before else f"first reports version {version}"
                    changes.append(Change(_moment(first, query), self.kind, f"{who} {what} ({metric})", link))
        whose = sorted({who for who, _ in seen})
        scope = f"{promql}: versions of {len(whose)} service{'' if len(whose) == 1 else 's'}"
        return SourceResult(self.name, scope, changes)

    def _whose(self, series: Series) -> tuple[str, str]:
        """(the service or job, the metric name): the replicas of one service are one group."""
        labels = series.labels
        who = (
            labels.get(self.service_label)
            or labels.get("job")
            or format_labels(
                {k: v for k, v in labels.items() if k not in (*PER_INSTANCE_LABELS, "__name__", self.version_label)}
            )
        )
        return who or "(unlabelled)", labels.get("__name__", self.metric)


class AlertChanges(_RangeSource):
    """Each firing episode of an alert in the window: when it started (or that it already fired), and if it ended."""

    name = "prometheus alerts"
    kind = SourceKind.ALERT
    what = "alerts that fired (Prometheus' ALERTS series)"

    async def read(self, query: ChangeQuery) -> SourceResult:
        promql = selector("ALERTS", self.matchers(query, alertstate="firing"))
        found, step = await self.series(promql, query)
        start, now = query.since.timestamp(), query.until.timestamp()
        hidden = {"__name__", "alertname", "alertstate", *([self.service_label] if query.service else [])}
        changes = []
        for series in found:
            alert = series.labels.get("alertname", "?")
            labels = format_labels({k: v for k, v in series.labels.items() if k not in hidden})
            link = self.link(selector("ALERTS", {"alertname": alert}), query)
            for first, last in runs([t for t, _ in series.points], step):
                began = "was already firing when the window began" if first <= start + step / 2 else "started firing"
                ended = "still firing" if last >= now - 1.5 * step else f"last seen firing {relative_time(last, now)}"
                text = f"{alert}{labels} {began}, {ended}"
                changes.append(Change(_moment(first, query), self.kind, text, link))
        return SourceResult(self.name, f"{promql}: {len(found)} alert series", changes)


def _present(times: list[float], t: float) -> bool:
    return any(abs(s - t) < 1 for s in times)


def _moment(ts: float, query: ChangeQuery) -> datetime:
    return datetime.fromtimestamp(ts, query.until.tzinfo or UTC)
