"""`opsagent check` for metrics: one label-values request proves Prometheus answers and the service label is right.

Reading the values of the service label over the last 6 h both reaches the server and shows whether
`service_label` names a label its series carry, the setting most often wrong.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from opsagent_tools.metrics.client import MetricsClient
from opsagent_tools.metrics.settings import MetricsSettings

CHECK_LOOKBACK = timedelta(hours=6)
SERVICES_SHOWN = 8


async def check_metrics(client: MetricsClient, settings: MetricsSettings, end: datetime) -> str:
    """The services Prometheus knows, as one line; a ToolFailure when it cannot be reached."""
    services = await client.label_values(settings.service_label, start=end - CHECK_LOOKBACK, end=end)
    if not services:
        return f"reachable, but no series carry the label '{settings.service_label}' in the last 6 h: check tools.metrics.service_label"
    more = " …" if len(services) > SERVICES_SHOWN else ""
    return f"reachable; {len(services)} services: {', '.join(services[:SERVICES_SHOWN])}{more}"
