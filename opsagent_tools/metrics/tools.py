"""The metrics tools the agent calls: `query_metrics` (a service's metric, summarised) and `list_metrics` (discovery).

Configured aliases spare the model from writing PromQL; outputs lead with the change point and end with the query.
"""

import asyncio
import math
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Annotated

from pydantic import Field

from kernel import Tool, ToolFailure, ToolOutput, tool_from_function
from opsagent_tools.links import LinkSettings
from opsagent_tools.metrics.client import MetricsClient
from opsagent_tools.metrics.headline import query_headline
from opsagent_tools.metrics.links import MetricLinks
from opsagent_tools.metrics.prometheus import PrometheusClient
from opsagent_tools.metrics.series import report_series
from opsagent_tools.metrics.settings import METRIC_NAME, PLACEHOLDERS, MetricsSettings
from opsagent_tools.names import capped, unknown_name
from opsagent_tools.time_words import format_span, parse_duration, utc_now, window_seconds

MAX_POINTS_PER_SERIES = 1000
"""Far below Prometheus' own 11,000-point limit: more points than this only cost time."""
NICE_STEPS_S = (15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
TARGET_POINTS = 30
DISCOVERY_LOOKBACK = timedelta(hours=6)
"""`list_metrics` and the no-data diagnosis look at series seen in this much time before now."""
LIST_CAP = 40
"""Names listed by `list_metrics` before "+N more"."""
QUERY_TOOL = "query_metrics"
"""The tool that reads one service's metric: the read a verification of an action runs again."""
DEFAULT_METRIC, DEFAULT_WINDOW = "http_5xx_rate", "30m"
"""What `query_metrics` reads when the call does not say."""
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


def step_seconds(window_s: float, step: str | None) -> float:
    """The given step, checked against the point limit, or about window/30 rounded up to a round step."""
    if step is None:
        wanted = window_s / TARGET_POINTS
        return float(next((s for s in NICE_STEPS_S if s >= wanted), NICE_STEPS_S[-1]))
    seconds = parse_duration(step, "step")
    if seconds < 1:
        raise ToolFailure(f'step "{step}" is zero.', hint="Use at least 1s, e.g. 30s or 5m, or leave it out.")
    if window_s / seconds > MAX_POINTS_PER_SERIES:
        least = format_span(math.ceil(window_s / MAX_POINTS_PER_SERIES))
        raise ToolFailure(
            f"step {step} over a {format_span(window_s)} window gives more than {MAX_POINTS_PER_SERIES} points.",
            hint=f"Use a step of at least {least}, or leave step out.",
        )
    return seconds


def render_promql(template: str, settings: MetricsSettings, service: str, *, step_s: float, window_s: float) -> str:
    """Fill a template's placeholders in one pass (other braces are PromQL's own and stay)."""
    rate_window = max(step_s + settings.scrape_interval_s, 4 * settings.scrape_interval_s)
    values = {
        "service": promql_string(service),
        "service_label": settings.service_label,
        "container_label": settings.container_label,
        "rate_window": f"{math.ceil(rate_window)}s",
        "window": f"{math.ceil(window_s)}s",
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def resolve_metric(
    settings: MetricsSettings, metric: str, service: str, *, step_s: float, window_s: float
) -> tuple[str, str, str | None]:
    """(name shown, PromQL, unit) for an alias, a bare metric name, or raw PromQL (shown as "PromQL")."""
    metric = metric.strip()
    alias = settings.aliases.get(metric)
    if alias is not None:
        return metric, render_promql(alias.promql, settings, service, step_s=step_s, window_s=window_s), alias.unit
    if METRIC_NAME.fullmatch(metric):
        template = metric + '{{service_label}="{service}"}'
        return metric, render_promql(template, settings, service, step_s=step_s, window_s=window_s), None
    return "PromQL", render_promql(metric, settings, service, step_s=step_s, window_s=window_s), None


def promql_string(text: str) -> str:
    """Text made safe inside a double-quoted PromQL string."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class _MetricsTools:
    """The state both tools share: settings, client, the clock that defines "now", and where people see a query."""

    def __init__(
        self, settings: MetricsSettings, client: MetricsClient, now: Callable[[], datetime], links: MetricLinks
    ) -> None:
        self.settings, self.client, self.now, self.links = settings, client, now, links

    async def query_metrics(self, service: str, metric: str, window: str, step: str | None) -> ToolOutput:
        window_s = window_seconds(window)
        step_s = step_seconds(window_s, step)
        name, promql, unit = resolve_metric(self.settings, metric, service, step_s=step_s, window_s=window_s)
        end = self.now()
        start = end - timedelta(seconds=window_s)
        found = await self.client.query_range(promql, start, end, step_s)
        found = [s for s in found if s.points]
        if not found:
            said, hint = await self._no_data(service, name, format_span(window_s), promql, end)
            raise ToolFailure(said, hint=hint)
        shown, left_out = report_series(found, end.timestamp(), unit, top=self.settings.max_series)
        head = f"{service} {name} over the last {format_span(window_s)}"
        lines = []
        if len(found) == 1:
            lines += [f"{head}: {shown[0].change.text}", shown[0].points]
        else:
            top = shown[0]
            lines.append(f"{head}, {len(found)} series; largest change {_labels(top.labels)}: {top.change.text}")
            for report in shown:
                lines += [f"{_labels(report.labels)}: {report.change.text}", f"  {report.points}"]
            if left_out:
                lines.append(f"+{left_out} more series with smaller changes (aggregate with sum by (...) to see them)")
        lines.append(f"query: {promql} · step {step_s:g}s · unit {unit or 'none (values as returned)'}")
        graph = self.links.graph(promql, start, end)
        return ToolOutput(
            "\n".join(lines),
            headline=query_headline("" if name == "PromQL" else name, shown, len(found)),
            links=(graph,) if graph is not None else (),
        )

    async def _no_data(self, service: str, name: str, window: str, promql: str, end: datetime) -> tuple[str, str]:
        """Why a query found no series, for people, and what to try next, for the model."""
        label = self.settings.service_label
        try:
            known = await known_services(self.client, self.settings, end)
        except ToolFailure:
            known = None
        tail = f" query: {promql}"
        if known is not None and service not in known:
            return f"{unknown_service(service, self.settings, known)}{tail}", "Use one of these names."
        not_alias = ""
        if METRIC_NAME.fullmatch(name) and name not in self.settings.aliases:
            not_alias = f" ({name} is not an alias: {', '.join(self.settings.aliases)})"
        return (
            f'no series for {label}="{service}" and {name} in the last {window}{not_alias} '
            f"(it may have stopped reporting).{tail}",
            f'list_metrics(service="{service}") shows what exists; check the service label, or try a longer window.',
        )

    async def list_metrics(self, service: str | None) -> ToolOutput:
        end = self.now()
        aliases = f"{len(self.settings.aliases)} aliases"
        lines = ["Aliases for query_metrics(metric=...):"]
        for alias_name, alias in self.settings.aliases.items():
            lines.append(f"  {alias_name} ({alias.unit or 'number'}): {alias.description}")
        service_label, container_label = self.settings.service_label, self.settings.container_label
        if service is None:
            services = await self.client.label_values(service_label, start=end - DISCOVERY_LOOKBACK, end=end)
            lines.append(f"Services (values of label {service_label}, {len(services)}): {capped(services, LIST_CAP)}")
            lines.append('list_metrics(service="...") lists the metric names one service has.')
            return ToolOutput("\n".join(lines), headline=f"{len(services)} services · {aliases}")
        value = promql_string(service)
        selectors = [f'{{{service_label}="{value}"}}', f'{{{container_label}="{value}"}}']
        names = await self.client.label_values("__name__", selectors, start=end - DISCOVERY_LOOKBACK, end=end)
        where = f'{service_label}="{service}" or {container_label}="{service}"'
        if not names:
            lines.append(unknown_service(service, self.settings, await known_services(self.client, self.settings, end)))
            return ToolOutput("\n".join(lines), headline=f"no metrics for {service} · {aliases}")
        lines.append(f"Metric names with {where} ({len(names)}): {capped(names, LIST_CAP)}")
        lines.append('Any of them works as metric=...; counters (…_total) read better as "sum(rate(NAME{...}[5m]))".')
        return ToolOutput("\n".join(lines), headline=f"{service}: {len(names)} metric names · {aliases}")


def unknown_service(
    service: str, settings: MetricsSettings, known: list[str], lookback: timedelta = DISCOVERY_LOOKBACK
) -> str:
    """The one sentence the metrics tools say when no series carries `service`: the nearest and the known names."""
    labels = f"{settings.service_label} or {settings.container_label}"
    within = format_span(lookback.total_seconds())
    return unknown_name("service", service, known, where=f"has metrics ({labels}) in the last {within}")


async def known_services(
    client: MetricsClient, settings: MetricsSettings, end: datetime, lookback: timedelta = DISCOVERY_LOOKBACK
) -> list[str]:
    """The services with series in the `lookback` before `end`: values of the service or the container label."""
    start = end - lookback
    by_service, by_container = await asyncio.gather(
        client.label_values(settings.service_label, start=start, end=end),
        client.label_values(settings.container_label, start=start, end=end),
    )
    return sorted(set(by_service) | set(by_container))


def _labels(labels: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else "(one series)"


def metrics_tools(
    settings: MetricsSettings,
    *,
    client: MetricsClient | None = None,
    now: Callable[[], datetime] | None = None,
    links: LinkSettings | None = None,
) -> list[Tool]:
    """`query_metrics` and `list_metrics` over `settings`' Prometheus (or `client`); `now` fixes the clock in tests;
    `links` says where people see a query (by default Prometheus' graph page at `settings.url`, without credentials)."""
    prometheus = client or PrometheusClient(base_url=settings.url, timeout=settings.timeout_s, headers=settings.headers)
    graphs = MetricLinks(links or LinkSettings(), settings.url)
    state = _MetricsTools(settings, prometheus, now or utc_now, graphs)
    aliases = ", ".join(settings.aliases)
    label = settings.service_label

    async def query_metrics(
        service: Annotated[
            str, Field(min_length=1, description=f"The service, as its {label} label says, e.g. order-service.")
        ],
        metric: Annotated[
            str,
            Field(
                description=f"An alias ({aliases}), a metric name (the service selector is added), or PromQL "
                f'with {{service}} where the name goes, e.g. sum(rate(http_requests_total{{{label}="{{service}}",'
                'code=~"5.."}[5m])).'
            ),
        ] = DEFAULT_METRIC,
        window: Annotated[
            str, Field(description="How far back from now: 15m, 1h, 2h30m … up to 7d. Widen it to see the baseline.")
        ] = DEFAULT_WINDOW,
        step: Annotated[
            str | int | None,
            Field(description="Time between points, e.g. 30s or 5m (a number is seconds). Default: about window/30."),
        ] = None,
    ) -> ToolOutput:
        return await state.query_metrics(service, metric, window, f"{step}s" if isinstance(step, int) else step)

    query_metrics.__doc__ = f"""Query one service's metric over a recent window and say when it changed.
    The first line names the change ("jumped from 0.10% to 12.0% at t-10m": t-10m is 10 minutes before now); then
    the values over time, one line per series (largest change first); the last line is the exact PromQL.
    Use it to confirm an alert, to find when a problem started, and to compare services (a dependency that degraded
    first is the better suspect). Pitfalls: 5xx may be produced by the gateway or load balancer, not the service:
    then query service=gateway. A ratio is NaN when there was no traffic. Aliases: {aliases}. If you are unsure of
    a service or metric name, call list_metrics instead of guessing."""

    async def list_metrics(
        service: Annotated[
            str | None, Field(description="A service to list the metric names of; leave out to list the services.")
        ] = None,
    ) -> ToolOutput:
        return await state.list_metrics(service)

    list_metrics.__doc__ = """List what query_metrics can query: the metric aliases, the services that report
    metrics, and, given a service, the names of the metrics it has. Call it when a service or metric name is
    uncertain or a query found no series; do not guess names."""

    tool_timeout = 2 * settings.timeout_s + 5
    return [
        tool_from_function(
            query_metrics,
            name=QUERY_TOOL,
            summary="Read a service's metrics over a time window",
            timeout=tool_timeout,
            returns="a one-line change summary, the values in relative time per series, and the PromQL used",
        ),
        tool_from_function(
            list_metrics,
            summary="List the metrics and services that can be queried",
            timeout=tool_timeout,
            returns="aliases, services or metric names",
        ),
    ]
