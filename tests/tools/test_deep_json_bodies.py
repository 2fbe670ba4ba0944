"""JSON nested 200,000 deep from the other backends that answer in JSON: Prometheus' answer is a clear failure
and a Loki log line that is a JSON object is kept as text; neither becomes a raw RecursionError."""

from __future__ import annotations

import pytest

from kernel import ToolFailure
from opsagent_tools.logs import LogsSettings, log_tools
from opsagent_tools.metrics.prometheus import PrometheusClient
from testkit.fakes.log_servers import NOW, FakeLoki, LokiEntry
from testkit.fakes.model_server import FakeModelServer, Reply
from worlds.dispatch import search_logs

DEEP = "[" * 200_000 + "]" * 200_000


async def test_prometheus_answering_deep_json_is_a_failure_that_quotes_the_start():
    async with FakeModelServer() as fake:
        fake.script(Reply(body=DEEP.encode(), headers={"Content-Type": "application/json"}))
        client = PrometheusClient(base_url=fake.url + "/")
        with pytest.raises(ToolFailure) as failure:
            await client.query("up")
    assert "/api/v1/query is not a Prometheus API response (HTTP 200: [[[[" in str(failure.value)
    assert "Recursion" not in str(failure.value)


async def test_a_log_line_of_deep_json_is_kept_as_a_line_and_the_search_goes_on():
    line = '{"level": "error", "msg": "payload", "body": ' + DEEP + "}"
    async with FakeLoki([LokiEntry(NOW, {"service_name": "order-service"}, line)]) as loki:
        tools = log_tools(LogsSettings(backend="loki", loki={"url": loki.url}), now=lambda: NOW)
        outcome = await search_logs(tools, service="order-service", since="15m", level="error")
    assert outcome.error is None, outcome.text
    assert '{"level": "error", "msg": "payload", "body": [[[[' in outcome.text
    assert "Recursion" not in outcome.text
