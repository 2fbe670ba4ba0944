"""The `[tools.metrics]` section: where Prometheus is, how services and metrics are named there, and the aliases.

An alias is a PromQL template with placeholders, so the model names a metric ("http_5xx_rate") instead of writing PromQL.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from opsagent_tools.metrics.series import Unit

PLACEHOLDERS = ("service", "service_label", "container_label", "rate_window", "window")
_UNKNOWN_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
"""A metric name as PromQL spells one (anything else is taken as a query or a pattern)."""


class MetricAlias(BaseModel):
    """A named PromQL template. Placeholders: {service} (the service name, escaped), {service_label},
    {container_label}, {rate_window} (the rate() range that suits the step) and {window} (the query window)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    promql: str
    unit: Unit | None = None
    description: str

    @field_validator("promql")
    @classmethod
    def _known_placeholders(cls, promql: str) -> str:
        unknown = sorted({name for name in _UNKNOWN_PLACEHOLDER.findall(promql) if name not in PLACEHOLDERS})
        if unknown:
            known = ", ".join("{" + name + "}" for name in PLACEHOLDERS)
            raise ValueError(f"unknown placeholder(s) {', '.join(unknown)} in alias PromQL; known: {known}")
        return promql


_REQUESTS = 'http_requests_total{{service_label}="{service}"'
DEFAULT_ALIASES: dict[str, MetricAlias] = {
    "http_5xx_rate": MetricAlias(
        promql=f'(sum(rate({_REQUESTS},code=~"5.."}}[{{rate_window}}])) or vector(0))'
        f" / sum(rate({_REQUESTS}}}[{{rate_window}}]))",
        unit="percent",
        description="share of HTTP requests answered with a 5xx status (http_requests_total, label code)",
    ),
    "http_request_rate": MetricAlias(
        promql=f"sum(rate({_REQUESTS}}}[{{rate_window}}]))",
        unit="rps",
        description="HTTP requests per second (http_requests_total)",
    ),
    "latency_p99": MetricAlias(
        promql='histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{{service_label}="'
        '{service}"}[{rate_window}])))',
        unit="seconds",
        description="99th percentile HTTP latency (http_request_duration_seconds histogram)",
    ),
    "cpu_usage": MetricAlias(
        promql='sum by (pod) (rate(container_cpu_usage_seconds_total{{container_label}="{service}"}[{rate_window}]))',
        unit="cores",
        description="CPU used per pod, in cores (cAdvisor; matched on the container name)",
    ),
    "memory_usage": MetricAlias(
        promql='sum by (pod) (container_memory_working_set_bytes{{container_label}="{service}"})',
        unit="bytes",
        description="working-set memory per pod (cAdvisor; what the OOM killer looks at)",
    ),
}
"""For the common exporters: client libraries' http_requests_total{code} and http_request_duration_seconds,
and cAdvisor (kubelet) container metrics, which name the container rather than the service."""


class MetricsSettings(BaseModel):
    """Where Prometheus is and how services and metrics are named there. `aliases` given here are added to
    (and override) the defaults."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        description="Base URL of the Prometheus-compatible API, e.g. http://prometheus:9090 or "
        "https://mimir.example/prometheus."
    )
    timeout_s: float = Field(10.0, gt=0)
    headers: dict[str, str] = Field(default_factory=dict, repr=False, description="e.g. Authorization, X-Scope-OrgID")
    service_label: str = "service"
    container_label: str = "container"
    scrape_interval_s: float = Field(15.0, gt=0, description="Sets the rate() window: max(step + 1, 4) intervals.")
    max_series: int = Field(5, ge=1, description="Series shown per query, largest change first.")
    aliases: dict[str, MetricAlias] = Field(default_factory=lambda: dict(DEFAULT_ALIASES))

    @field_validator("aliases")
    @classmethod
    def _over_defaults(cls, aliases: dict[str, MetricAlias]) -> dict[str, MetricAlias]:
        bad = [name for name in aliases if not METRIC_NAME.fullmatch(name)]
        if bad:
            raise ValueError(f"alias names must look like metric names (letters, digits, _): {', '.join(bad)}")
        return DEFAULT_ALIASES | aliases
