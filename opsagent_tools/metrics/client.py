"""What the metrics family reads from: a Prometheus-compatible HTTP API, or a file of recorded series.

The tools, `discover`, the change timeline and `opsagent check` all read through one `MetricsClient`, made here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from opsagent_tools.metrics.files import FileMetricsClient
from opsagent_tools.metrics.prometheus import PrometheusClient
from opsagent_tools.metrics.series import Series
from opsagent_tools.metrics.settings import MetricsSettings


class MetricsClient(Protocol):
    """What the metrics tools need from a backend: `PrometheusClient`, or `FileMetricsClient` for recordings.

    Metric names are the values of the `__name__` label.
    """

    async def query_range(self, promql: str, start: datetime, end: datetime, step_s: float) -> list[Series]: ...

    async def label_values(
        self,
        label: str,
        match: str | Sequence[str] | None = None,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> list[str]: ...

    async def label_names(self, *, start: datetime | None = None, end: datetime | None = None) -> list[str]: ...

    async def series(
        self, match: str, *, start: datetime | None = None, end: datetime | None = None, limit: int = 0
    ) -> list[dict[str, str]]: ...


def metrics_client(settings: MetricsSettings) -> MetricsClient:
    """The metrics backend the URL names: recorded series for `file://`, else the Prometheus HTTP API."""
    url = urlsplit(settings.url)
    if url.scheme == "file":
        return FileMetricsClient(Path(url.path))
    return PrometheusClient(base_url=settings.url, timeout=settings.timeout_s, headers=settings.headers)
