"""A real Prometheus scraping a local exporter every second, for tests where a metric must change while they run (an
incident that begins, a rollback that makes it recover): the test sets a gauge, Prometheus scrapes it.

- `GaugeExporter` serves `/metrics` in Prometheus' text format from a thread (so any event loop, or none, may set
  its values): one gauge, one series per service, at the value the test set last.
- `scraping_prometheus(root, exporter)` starts Prometheus (scrape and evaluation every 1 s) on a free port, scraping
  the exporter; `samples(prometheus, selector)` says how many samples it holds of a series in the last minutes, so a
  test waits for data rather than sleeping.
- Without the `prometheus` binary the fixture fails (it does not skip): apt-get install prometheus.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from testkit.servers.local_server import free_port
from testkit.servers.prometheus import binary, served

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
