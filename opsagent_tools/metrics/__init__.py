"""Metrics: `query_metrics` and `list_metrics` over Prometheus (or anything speaking its HTTP API) or recorded files.

A series becomes the few lines a model reads: relative times, units, and the change point. After an approved action,
`MetricsFamily.recheck` reads a symptom again and says whether it is gone (a `SymptomCheck`).
"""

from opsagent_tools.metrics.family import MetricsFamily
from opsagent_tools.metrics.settings import DEFAULT_ALIASES, MetricAlias, MetricsSettings
from opsagent_tools.metrics.tools import metrics_tools
from opsagent_tools.metrics.verify import SymptomCheck

__all__ = ["DEFAULT_ALIASES", "MetricAlias", "MetricsFamily", "MetricsSettings", "SymptomCheck", "metrics_tools"]
