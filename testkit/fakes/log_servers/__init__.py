"""Fake Loki and Elasticsearch servers on 127.0.0.1 that speak the documented response shapes and filter by the request.

Each server parses the time range, limit and a simplified query language, keeps every request for assertions,
and fails on demand (an error status and body, or a hang that ends when the server closes): what they share is
`server`, Loki's query language and endpoints `loki`, Elasticsearch's search, indices and field caps `elasticsearch`.
"""

from datetime import UTC, datetime

from testkit.fakes.log_servers.elasticsearch import FakeElasticsearch, es_error, es_parse_error
from testkit.fakes.log_servers.loki import FakeLoki, LogQL, LokiEntry, loki_time
from testkit.fakes.log_servers.server import BadRequest, Failure, LogServer, Request

NOW = datetime(2026, 11, 30, 3, 38, 57, tzinfo=UTC)
"""The fixed clock of every log test."""

__all__ = [
    "NOW",
    "BadRequest",
    "Failure",
    "FakeElasticsearch",
    "FakeLoki",
    "LogQL",
    "LogServer",
    "LokiEntry",
    "Request",
    "es_error",
    "es_parse_error",
    "loki_time",
]
