"""Logs: one `search_logs` tool over Loki, Elasticsearch/OpenSearch or local files, with one result shape.

Every backend answers the same `LogQuery` with counts and grouped messages, so the model reads them all alike.
"""

from opsagent_tools.logs.family import LogsFamily
from opsagent_tools.logs.search import LogQuery
from opsagent_tools.logs.settings import LogsSettings
from opsagent_tools.logs.tools import build_backend, log_tools

__all__ = ["LogQuery", "LogsFamily", "LogsSettings", "build_backend", "log_tools"]
