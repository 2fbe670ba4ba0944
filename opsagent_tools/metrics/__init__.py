"""Metrics: `query_metrics` and `list_metrics` over Prometheus (or anything speaking its HTTP API) or recorded files.

A series becomes the few lines a model reads: relative times, units, and the change point.
"""

from opsagent_tools.metrics.tools import MetricAlias, MetricsSettings, metrics_tools

__all__ = ["MetricAlias", "MetricsSettings", "metrics_tools"]
