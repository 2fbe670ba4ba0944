"""The metrics family: one client for Prometheus (or recorded series), shared by `query_metrics` and `list_metrics`,
`discover`'s Prometheus kinds, the alerts and versions of the change timeline, `opsagent check`, and the re-read
of a symptom that verifies an approved action."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import cached_property

from kernel import Tool, ToolCall
from opsagent_tools.changes import ChangeSource, ChangesSettings
from opsagent_tools.check_result import CheckResult, probe
from opsagent_tools.discovery import DiscoverySettings, DiscoverySource
from opsagent_tools.family import ToolFamily
from opsagent_tools.links import LinkSettings
from opsagent_tools.metrics.changes import change_sources
from opsagent_tools.metrics.check import check_metrics
from opsagent_tools.metrics.client import MetricsClient, metrics_client
from opsagent_tools.metrics.discovery import PrometheusDiscovery
from opsagent_tools.metrics.links import MetricLinks
from opsagent_tools.metrics.settings import MetricsSettings
from opsagent_tools.metrics.tools import QUERY_TOOL, metrics_tools
from opsagent_tools.metrics.verify import SymptomCheck, recheck_symptom


class MetricsFamily(ToolFamily):
    """`[tools.metrics]`: the tools read "now" from `now`; `links` says where people see a query."""

    keywords = (
        "metrics",
        "prometheus",
        "rate",
        "errors",
        "error rate",
        "5xx",
        "500",
        "503",
        "failing",
        "latency",
        "p99",
        "slow",
        "requests",
        "saturation",
        "cpu",
        "memory",
        "traffic",
        "spike",
        "jumped",
    )

    def __init__(self, settings: MetricsSettings, *, now: Callable[[], datetime], links: LinkSettings) -> None:
        self.settings, self.now, self.links = settings, now, links

    @cached_property
    def client(self) -> MetricsClient:
        """The backend the URL names, made once."""
        return metrics_client(self.settings)

    def tools(self) -> Sequence[Tool]:
        return metrics_tools(self.settings, client=self.client, now=self.now, links=self.links)

    def discovery(self, settings: DiscoverySettings) -> DiscoverySource:
        return PrometheusDiscovery(self.client, self.settings, self.now, timedelta(seconds=settings.lookback_s))

    def change_sources(self, settings: ChangesSettings) -> Sequence[ChangeSource]:
        return change_sources(settings, self.client, self.settings, MetricLinks(self.links, self.settings.url))

    async def check(self) -> list[CheckResult]:
        return [await probe("metrics", lambda: check_metrics(self.client, self.settings, self.now()))]

    def rechecks(self, call: ToolCall) -> bool:
        """Whether `call` is a read this family can run again to verify an action: a `query_metrics` call."""
        return call.name == QUERY_TOOL

    async def recheck(self, call: ToolCall, *, action_at: datetime) -> SymptomCheck:
        """Run `call`'s query again, from its window before `action_at` to now, and say whether the symptom it showed
        is gone (`opsagent_tools.metrics.verify`). Never raises: a failure is an inconclusive check."""
        return await recheck_symptom(self.client, self.settings, call.args, action_at=action_at, now=self.now())
