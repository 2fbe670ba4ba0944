"""Links to a PromQL query over a time range: Grafana Explore when `[links]` names Grafana, else Prometheus' graph.

`query_metrics` and the change timeline's Prometheus sources link the same way, to the exact query they ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from kernel import SourceLink
from opsagent_tools.links import LinkSettings, grafana_explore, page_url

PROMETHEUS_TIME = "%Y-%m-%d %H:%M:%S"
"""How Prometheus' graph page writes and reads `g0.end_input` (UTC)."""
_UNITS = (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


@dataclass(frozen=True, slots=True)
class MetricLinks:
    """Where a metrics backend's queries are seen by people: `[links]` over the `[tools.metrics] url`."""

    links: LinkSettings
    metrics_url: str

    def graph(self, promql: str, start: datetime, end: datetime, label: str = "graph") -> SourceLink | None:
        """The query over [start, end] in Grafana Explore or Prometheus' graph page; None without a public base
        (recorded `file://` series, a non-http URL)."""
        explore = grafana_explore(
            self.links,
            "prometheus",
            {"expr": promql, "range": True, "instant": False, "editorMode": "code"},
            start,
            end,
        )
        if explore is not None:
            return SourceLink(label, explore)
        base = self.links.prometheus_base(self.metrics_url)
        if base is None:
            return None
        moment = end.astimezone(UTC).strftime(PROMETHEUS_TIME)
        params = {
            "g0.expr": promql,
            "g0.tab": "0",
            "g0.range_input": prometheus_duration((end - start).total_seconds()),
            "g0.end_input": moment,
            "g0.moment_input": moment,
        }
        return SourceLink(label, page_url(base, "graph", params))


def prometheus_duration(seconds: float) -> str:
    """A duration as Prometheus writes one, exactly: 5400 s is "1h30m", 90 s "1m30s" (at least "1s")."""
    left, parts = max(1, round(seconds)), []
    for unit, size in _UNITS:
        count, left = divmod(left, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
