"""What `discover` lists from Prometheus: metric names (per service), label names and values, and the labels of
the series a selector picks, all bounded to the recent past (`/api/v1/label/<name>/values`, `/labels`, `/series`).

A listing that comes back empty says why, with the nearest names that do exist.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from kernel import ToolFailure
from opsagent_tools.discovery import Kind
from opsagent_tools.metrics.client import MetricsClient
from opsagent_tools.metrics.settings import MetricsSettings
from opsagent_tools.metrics.tools import known_services, unknown_service
from opsagent_tools.names import capped, unknown_name
from opsagent_tools.time_words import format_span

MAX_SERIES = 500
"""Series read for one `prometheus_series` listing."""
VALUES_SHOWN = 12
"""Values shown per label of a series listing."""
LISTED = 100
"""Names or values listed before "(+N more)"."""
_SELECTOR_NAME = re.compile(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)")
_SERVICE_MATCHER = r'{label}\s*=\s*"((?:[^"\\]|\\.)*)"'

KINDS = (
    Kind(
        "prometheus_metrics",
        "metric names in Prometheus",
        "a service (its service or container label) to list only its metrics; none: every metric name",
    ),
    Kind(
        "prometheus_labels",
        "label names in Prometheus, or the values of one label",
        "a label name, e.g. code, to list its values; none: every label name",
    ),
    Kind(
        "prometheus_series",
        "the labels, with their values, on the series a selector picks: which label says the status, the pod",
        'a metric name or series selector, e.g. http_requests_total{service="checkout"}',
        filter_required=True,
    ),
)


class PrometheusDiscovery:
    """The `discover` source over a metrics client (Prometheus' HTTP API, or recorded series)."""

    kinds: Sequence[Kind] = KINDS

    def __init__(
        self, client: MetricsClient, settings: MetricsSettings, now: Callable[[], datetime], lookback: timedelta
    ) -> None:
        self._client, self._settings, self._now, self._lookback = client, settings, now, lookback

    @property
    def _within(self) -> str:
        return f"in the last {format_span(self._lookback.total_seconds())}"

    async def discover(self, kind: str, filter: str | None) -> str:
        """The listing of one of `KINDS`."""
        end = self._now()
        start = end - self._lookback
        match kind:
            case "prometheus_metrics":
                return await self._metrics(filter, start, end)
            case "prometheus_labels":
                return await self._labels(filter, start, end)
            case "prometheus_series":
                assert filter is not None  # the tool requires it
                return await self._series(filter, start, end)
        raise ToolFailure(f"Prometheus lists no kind {kind!r}")

    async def _metrics(self, service: str | None, start: datetime, end: datetime) -> str:
        if service is None:
            names = await self._client.label_values("__name__", start=start, end=end)
            return f"Metric names {self._within} ({len(names)}): {capped(names, LISTED)}"
        value = service.replace("\\", "\\\\").replace('"', '\\"')
        labels = (self._settings.service_label, self._settings.container_label)
        names = await self._client.label_values(
            "__name__", [f'{{{label}="{value}"}}' for label in labels], start=start, end=end
        )
        if not names:
            known = await known_services(self._client, self._settings, end, self._lookback)
            return unknown_service(service, self._settings, known, self._lookback)
        return f"Metric names of service {service} {self._within} ({len(names)}): {capped(names, LISTED)}"

    async def _labels(self, label: str | None, start: datetime, end: datetime) -> str:
        names = await self._client.label_names(start=start, end=end)
        if label is None:
            return (
                f"Label names {self._within} ({len(names)}): {capped(names, LISTED)}\n"
                'discover(kind="prometheus_labels", filter="<label>") lists one label\'s values.'
            )
        values = await self._client.label_values(label, start=start, end=end) if label in names else []
        if not values:
            return unknown_name("label", label, names, where=f"is on any series {self._within}")
        return f"Values of label {label} {self._within} ({len(values)}): {capped(values, LISTED)}"

    async def _series(self, selector: str, start: datetime, end: datetime) -> str:
        found = await self._client.series(selector, start=start, end=end, limit=MAX_SERIES)
        if not found:
            return await self._no_series(selector, start, end)
        values: dict[str, set[str]] = {}
        for labels in found:
            for name, value in labels.items():
                values.setdefault(name, set()).add(value)
        cut = f", the first {MAX_SERIES} read" if len(found) >= MAX_SERIES else ""
        lines = [f"{len(found)} series match {selector} {self._within}{cut}; their labels and values:"]
        for name in sorted(values):
            shown = sorted(values[name])
            lines.append(f"  {name} ({len(shown)}): {capped(shown, VALUES_SHOWN)}")
        return "\n".join(lines)

    async def _no_series(self, selector: str, start: datetime, end: datetime) -> str:
        """Why a selector picks nothing: an unknown metric name, an unknown service, or label values that do not meet."""
        name = _SELECTOR_NAME.match(selector)
        if name is not None:
            metrics = await self._client.label_values("__name__", start=start, end=end)
            if name[1] not in metrics:
                return unknown_name("metric", name[1], metrics, where=f"has series {self._within}")
        service = re.search(_SERVICE_MATCHER.format(label=re.escape(self._settings.service_label)), selector)
        if service is not None:
            known = await known_services(self._client, self._settings, end, self._lookback)
            if service[1] not in known:
                return unknown_service(service[1], self._settings, known, self._lookback)
        return (
            f"No series match {selector} {self._within}: the names exist, but no series has all those label values. "
            'Drop a matcher, or list a label\'s values with discover(kind="prometheus_labels", filter="<label>").'
        )
