"""`opsagent check` for logs: one search for a service no one has, which reaches the store without reading logs.

The answer's service list (when the backend gives one) shows the operator which names the model will see.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from opsagent_tools.logs.search import LogBackend, LogQuery

CHECK_SERVICE = "opsagent-check"
"""A service name no one uses: a log search for it proves the backend answers without reading real logs."""
CHECK_WINDOW = timedelta(minutes=15)
SERVICES_SHOWN = 8


async def check_logs(backend: LogBackend, end: datetime) -> str:
    """Whether the log store answers, as one line; a ToolFailure when it does not."""
    probe = LogQuery(service=CHECK_SERVICE, since=end - CHECK_WINDOW, until=end, level=None, query="", limit=1)
    result = await backend.search(probe)
    services = f"; services seen: {', '.join(result.services[:SERVICES_SHOWN])}" if result.services else ""
    return f"reachable ({result.total} lines for the probe service '{CHECK_SERVICE}'){services}"
