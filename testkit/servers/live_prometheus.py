"""A real Prometheus scraping a local exporter every second, for tests where a metric must change while they run (an
incident that begins, a rollback that makes it recover): the test sets a gauge, Prometheus scrapes it.

- `GaugeExporter` serves `/metrics` in Prometheus' text format from a thread (so any event loop, or none, may set
  its values): one gauge, one series per service, at the value the test set last.
- `scraping_prometheus(root, exporter)` starts Prometheus (scrape and evaluation every 1 s) on a free port, scraping
  the exporter; `samples(prometheus, selector)` says how many samples it holds of a series in the last minutes, so a
  test waits for data rather than sleeping.
- `LiveIncident` is the two together, with the metrics family that reads them (`http_5xx_rate` is the gauge), and
  `RollbackBot` the Slack app's runs on it: they read the real Prometheus and roll back, which changes the gauge.
- Without the `prometheus` binary the fixture fails (it does not skip): apt-get install prometheus.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from kernel import ToolRegistry
from opsagent_tools.links import LinkSettings
from opsagent_tools.metrics import MetricAlias, MetricsFamily, MetricsSettings
from opsagent_tools.time_words import utc_now
from testkit.servers.local_server import free_port
from testkit.servers.prometheus import binary, served
from testkit.slack_bot import IncidentBot

GAUGE = "opsagent_test_error_ratio"
"""The exporter's gauge: a share of requests that fail, per `service` label."""
LOOKBACK_S = 300


class GaugeExporter:
    """`/metrics` with `GAUGE{service="…"}` at the values `set` last; a context manager that serves from a thread."""

    def __init__(self) -> None:
        self._values: dict[str, float] = {}
        self._lock = threading.Lock()
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = exporter.exposition().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:  # quiet: Prometheus scrapes every second
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def set(self, service: str, value: float) -> None:
        with self._lock:
            self._values[service] = value

    def remove(self, service: str) -> None:
        """The service stops reporting: its series leaves the exposition (Prometheus marks it stale)."""
        with self._lock:
            self._values.pop(service, None)

    def exposition(self) -> str:
        with self._lock:
            lines = [f'{GAUGE}{{service="{service}"}} {value!r}' for service, value in sorted(self._values.items())]
        return "\n".join([f"# TYPE {GAUGE} gauge", *lines]) + "\n"

    def __enter__(self) -> GaugeExporter:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextlib.contextmanager
def scraping_prometheus(root: Path, exporter: GaugeExporter) -> Iterator[str]:
    """Prometheus scraping `exporter` every second, on a free port under `root`; its URL."""
    target = exporter.url.removeprefix("http://")
    config = root / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"scrape_configs:\n  - job_name: exporter\n    static_configs:\n      - targets: ['{target}']\n"
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        binary("prometheus"),
        f"--config.file={config}",
        f"--storage.tsdb.path={root / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    with served("prometheus", command, url, root / "prometheus.log"):
        yield url


def samples(url: str, selector: str, *, above: float | None = None) -> int:
    """How many samples of `selector` Prometheus holds from the last `LOOKBACK_S` seconds (only those above `above`,
    when given)."""
    series = f"({selector} > {above!r})" if above is not None else selector
    query = f"count_over_time({series}[{LOOKBACK_S}s:1s])" if above is not None else f"count_over_time({series}[5m])"
    answer = httpx.get(f"{url}/api/v1/query", params={"query": query, "time": time.time()}, timeout=5).json()
    result = answer["data"]["result"]
    return int(float(result[0]["value"][1])) if result else 0


def wait_for_samples(url: str, selector: str, count: int, *, above: float | None = None, within_s: float = 30) -> None:
    """Wait until Prometheus holds `count` samples of `selector` (above `above`, when given)."""
    deadline = time.monotonic() + within_s
    while samples(url, selector, above=above) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"Prometheus did not scrape {count} samples of {selector} within {within_s:g} s")
        time.sleep(0.2)


@dataclass(frozen=True)
class LiveIncident:
    """An exporter and the Prometheus scraping it."""

    url: str
    exporter: GaugeExporter

    def metrics(self, url: str | None = None) -> MetricsFamily:
        """The metrics family on this Prometheus (or another `url`), on the wall clock; its `http_5xx_rate` (and
        `error_ratio`) is the exporter's gauge, in percent."""
        gauge = MetricAlias(promql=f'max({GAUGE}{{service="{{service}}"}})', unit="percent", description="failing")
        aliases = {"http_5xx_rate": gauge, "error_ratio": gauge}
        settings = MetricsSettings(url=url or self.url, scrape_interval_s=1, aliases=aliases)
        return MetricsFamily(settings, now=utc_now, links=LinkSettings())


NORMAL, INCIDENT = 0.001, 0.12
"""The errors' share before the incident and during it."""


@contextlib.contextmanager
def live_incident(root: Path, services: tuple[str, ...]) -> Iterator[LiveIncident]:
    """An exporter and Prometheus under `root`: every service's errors at 0.1% for 8 scrapes, then at 12% for 5
    seconds (and on, until a rollback or the test changes them)."""
    with GaugeExporter() as exporter:
        for service in services:
            exporter.set(service, NORMAL)
        with scraping_prometheus(root, exporter) as url:
            selector = f'{GAUGE}{{service="{services[0]}"}}'
            wait_for_samples(url, selector, 8)
            for service in services:
                exporter.set(service, INCIDENT)
            wait_for_samples(url, selector, 5, above=INCIDENT / 2)
            yield LiveIncident(url, exporter)


class RollbackBot(IncidentBot):
    """The Slack app's runs on a `LiveIncident`: `query_metrics` reads its Prometheus, and `rollback_deployment` (a
    side effect) sets what then happens to the service's errors, `after_rollback`: a value, None (unchanged), or
    "gone" (the service stops reporting)."""

    def __init__(self, script: list[list[Any]], incident: LiveIncident, after_rollback: float | str | None) -> None:
        super().__init__(script)
        self.tools = ToolRegistry(incident.metrics().tools())
        executed, exporter = self.executed, incident.exporter

        @self.tools.register(side_effect=True)
        async def rollback_deployment(service: str, to_version: str) -> str:
            """Roll back a deployment."""
            executed.append((service, to_version))
            if after_rollback == "gone":
                exporter.remove(service)
            elif isinstance(after_rollback, float):
                exporter.set(service, after_rollback)
            return f"rolled back {service} to {to_version}"
