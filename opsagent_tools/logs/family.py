"""The logs family: one backend (files, Loki or Elasticsearch), its secrets read once, shared by `search_logs`,
`discover`'s log kinds and `opsagent check`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from functools import cached_property

from kernel import Tool
from opsagent_tools.check_result import CheckResult, probe
from opsagent_tools.discovery import DiscoverySettings, DiscoverySource
from opsagent_tools.family import ToolFamily
from opsagent_tools.links import LinkSettings
from opsagent_tools.logs.check import check_logs
from opsagent_tools.logs.discovery import log_discovery
from opsagent_tools.logs.search import LogBackend
from opsagent_tools.logs.settings import LogsSettings
from opsagent_tools.logs.tools import build_backend, log_tools


class LogsFamily(ToolFamily):
    """`[tools.logs]`: secrets come from `environ`; the tools read "now" from `now`; `links` says where people see
    a search."""

    keywords = (
        "logs",
        "errors",
        "exceptions",
        "stack trace",
        "messages",
        "5xx",
        "500",
        "503",
        "failing",
        "fail",
        "timeout",
        "refused",
        "crash",
        "why",
        "cause",
    )

    def __init__(
        self,
        settings: LogsSettings,
        *,
        environ: Mapping[str, str],
        now: Callable[[], datetime],
        links: LinkSettings,
    ) -> None:
        self.settings, self.environ, self.now, self.links = settings, environ, now, links

    @cached_property
    def backend(self) -> LogBackend:
        """The configured backend, made once; a ValueError names a secret that is not set."""
        return build_backend(self.settings, self.environ)

    def tools(self) -> Sequence[Tool]:
        return log_tools(self.settings, backend=self.backend, now=self.now, links=self.links)

    def discovery(self, settings: DiscoverySettings) -> DiscoverySource | None:
        return log_discovery(self.settings, self.backend, self.now, timedelta(seconds=settings.lookback_s))

    async def check(self) -> list[CheckResult]:
        name = f"logs ({self.settings.backend})"
        return [await probe(name, lambda: check_logs(self.backend, self.now()))]
