"""A real Prometheus for the metrics tests: incident-shaped series backfilled with promtool, served on a free port.

The data covers the two hours up to `anchor` (a multiple of 15 s just before the session starts); tests give the
tools `now=server.now`, so every window is fixed however long the session runs.

How it works, and the time caveat:
- `incident_openmetrics(anchor)` writes counters and gauges sampled every 15 s (see SHAPES below);
  `promtool tsdb create-blocks-from openmetrics FILE DIR` turns them into TSDB blocks (two, cut at the 2-hour
  boundaries), and `prometheus --storage.tsdb.path=DIR` with a config of no scrape targets serves them.
- Backfilled data may reach right up to now: this Prometheus scrapes nothing, so its head block stays empty and
  never overlaps the blocks (and Prometheus ≥ 2.39 merges overlapping blocks anyway). Retention counts back from
  the newest block, so nothing is deleted. Checked with Prometheus 2.42 (Debian 12).
- Querying "now" from the wall clock would make the last points depend on when a test runs (and after 5 minutes
  of lookback the newest samples go stale); hence the injected clock, pinned to `anchor`.
- Tests take the session's server as a `prometheus` argument (the fixture is in tests/conftest.py);
  `incident_prometheus(root, config, flags)` starts another one with its own configuration (rules, an
  Alertmanager: see tests/e2e/test_alerts_e2e.py), and `served` runs any server of the Prometheus family.
- Without the `prometheus` and `promtool` binaries the fixture fails (it does not skip): apt-get install prometheus.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from testkit.servers.local_server import free_port

SCRAPE_S = 15
HISTORY_S = 2 * 3600
SPIKE_AT_S = 630
"""order-service's incident begins 10.5 minutes before the anchor: with a 1-minute step the t-10m point is half
way up (rate() spans the change) and t-9m is at the new level: "jumped ... at t-10m"."""
DRIFT_S = 1800
"""payment-service's 5xx ratio climbs linearly over the last 30 minutes."""
GHOST_STOPPED_S = 3600
"""ghost-service stopped reporting an hour before the anchor."""
LATENCY_BUCKETS = ("0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf")
LATENCY_BEFORE = (0.6, 0.95, 0.995, 1, 1, 1, 1, 1)
"""Cumulative share of requests within each bucket: p99 = 0.1 + (0.99-0.95)/(0.995-0.95)·0.15 = 233 ms."""
LATENCY_AFTER = (0.5, 0.8, 0.85, 0.87, 0.88, 0.9, 1, 1)
"""After the incident: p99 = 2.5 + (0.99-0.9)/(1-0.9)·2.5 = 4.75 s."""
ORDER_PODS = ("order-service-7d9f8-abcde", "order-service-7d9f8-fghij")
DEPLOY_AT_S = 720
"""order-service's build info reports v2.14.0 from 12 minutes before the anchor (v2.13.2 before): the deploy."""
INVENTORY_DEPLOY_AT_S = 5400
"""inventory-service's build info moves from v3.1.0 to v3.2.0 an hour and a half before the anchor."""
FIRING_AT_S, PENDING_AT_S = 480, 600
"""OrderService5xxBurnRate is pending from t-10m and firing from t-8m to the anchor (still firing)."""
PAYMENT_ALERT_S = (3000, 2400)
"""PaymentServiceLatencyHigh fired from t-50m to t-40m, then resolved."""
# The incident's shapes (SHAPES, as the docstrings call them):
# - order-service: 5xx 0.1% → 12% at t-10m, p99 233 ms → 4.75 s, pod abcde CPU 0.2 → 0.9 cores; memory flat;
#   app_build_info{version} v2.13.2 → v2.14.0 at t-12m; ALERTS OrderService5xxBurnRate firing from t-8m
# - payment-service: 5xx 0.1% rising linearly to 2.3% over the last 30m; app_build_info v1.8.3 throughout;
#   ALERTS PaymentServiceLatencyHigh firing from t-50m to t-40m
# - inventory-service: 5xx flat at 0.1%, traffic noisy around 80 req/s; app_build_info v3.1.0 → v3.2.0 at t-90m
# - ghost-service: reported until an hour ago, then nothing
MIB = 1024 * 1024
DEFAULT_CONFIG = "global:\n  scrape_interval: 15s\nscrape_configs: []\n"
"""No scrape targets: the head block stays empty, the backfilled blocks are all there is."""


@dataclass(frozen=True)
class PrometheusServer:
    """A running Prometheus: its URL, and the instant its data ends, which the tests use as now."""

    url: str
    anchor: datetime

    def now(self) -> datetime:
        return self.anchor


def incident_openmetrics(anchor: int) -> str:
    """OpenMetrics text for SHAPES: samples every 15 s from anchor - 2 h to anchor, counters integrated from rates."""
    rng = random.Random(7)
    times = list(range(anchor - HISTORY_S, anchor + 1, SCRAPE_S))

    def counter(rate_at: Callable[[int], float], until: int = anchor) -> list[tuple[int, float]]:
        total, samples = 0.0, []
        for t in times:
            if t > until:
                break
            total += rate_at(t) * SCRAPE_S  # the rate over the 15 s ending at t
            samples.append((t, total))
        return samples

    def traffic(mean: float, jitter: float) -> dict[int, float]:
        return {t: mean * (1 + rng.uniform(-jitter, jitter)) for t in times}

    def spike(t: int) -> bool:
        return t > anchor - SPIKE_AT_S

    def drift(t: int) -> float:
        return 0.001 + 0.022 * max(0, t - (anchor - DRIFT_S)) / DRIFT_S

    ratios: dict[str, Callable[[int], float]] = {
        "order-service": lambda t: 0.12 if spike(t) else 0.001,
        "payment-service": drift,
        "inventory-service": lambda t: 0.001,
        "ghost-service": lambda t: 0.001,
    }
    rates = {
        "order-service": traffic(100, 0.02),
        "payment-service": traffic(50, 0.02),
        "inventory-service": traffic(80, 0.1),
        "ghost-service": traffic(20, 0.02),
    }
    requests, buckets, cpu, memory = [], [], [], []
    for service, ratio in ratios.items():
        until = anchor - GHOST_STOPPED_S if service == "ghost-service" else anchor
        rate = rates[service]
        errors = counter(lambda t, r=rate, share=ratio: r[t] * share(t), until)
        total = counter(lambda t, r=rate: r[t], until)
        ok = [(t, all_ - bad) for (t, all_), (_, bad) in zip(total, errors, strict=True)]
        requests += [(f'service="{service}",code="200"', ok), (f'service="{service}",code="500"', errors)]
    order_rate = rates["order-service"]
    for i, le in enumerate(LATENCY_BUCKETS):
        share = {True: LATENCY_AFTER[i], False: LATENCY_BEFORE[i]}
        samples = counter(lambda t, s=share: order_rate[t] * s[spike(t)])
        buckets.append((f'service="order-service",le="{le}"', samples))
    for pod in ORDER_PODS:
        labels = f'namespace="shop",pod="{pod}",container="order-service"'
        hot = pod == ORDER_PODS[0]
        cpu.append((labels, counter(lambda t, h=hot: 0.9 if h and spike(t) else 0.2)))
        memory.append((labels, [(t, 300 * MIB + rng.uniform(-1, 1) * MIB) for t in times]))
    families = [
        ("http_requests", "counter", "http_requests_total", requests),
        ("http_request_duration_seconds", "histogram", "http_request_duration_seconds_bucket", buckets),
        ("container_cpu_usage_seconds", "counter", "container_cpu_usage_seconds_total", cpu),
        ("container_memory_working_set_bytes", "gauge", "container_memory_working_set_bytes", memory),
        ("app_build_info", "gauge", "app_build_info", build_info(times, anchor)),
        ("ALERTS", "gauge", "ALERTS", alerts(times, anchor)),
    ]
    lines = []
    for family, kind, sample_name, series in families:
        lines.append(f"# TYPE {family} {kind}")
        for labels, samples in series:
            lines.extend(f"{sample_name}{{{labels}}} {value!r} {t}" for t, value in samples)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


Samples = list[tuple[str, list[tuple[int, float]]]]


def ones(
    times: list[int], anchor: int, labels: str, start_s: int, stop_s: int = 0
) -> tuple[str, list[tuple[int, float]]]:
    """A series of 1s from `start_s` to `stop_s` seconds before the anchor (both included): an info metric, an alert."""
    return labels, [(t, 1.0) for t in times if anchor - start_s <= t <= anchor - stop_s]


def build_info(times: list[int], anchor: int) -> Samples:
    """app_build_info{service,version} = 1 while a version runs: the version label changes, the value never does."""
    before = DEPLOY_AT_S + SCRAPE_S, INVENTORY_DEPLOY_AT_S + SCRAPE_S  # the last samples of the replaced versions
    return [
        ones(times, anchor, 'service="order-service",version="v2.13.2"', HISTORY_S, before[0]),
        ones(times, anchor, 'service="order-service",version="v2.14.0"', DEPLOY_AT_S),
        ones(times, anchor, 'service="payment-service",version="v1.8.3"', HISTORY_S),
        ones(times, anchor, 'service="inventory-service",version="v3.1.0"', HISTORY_S, before[1]),
        ones(times, anchor, 'service="inventory-service",version="v3.2.0"', INVENTORY_DEPLOY_AT_S),
    ]


def alerts(times: list[int], anchor: int) -> Samples:
    """ALERTS as Prometheus writes it for its alerting rules: 1 per evaluation while pending or firing."""
    order = 'alertname="OrderService5xxBurnRate",service="order-service",severity="page"'
    payment = 'alertname="PaymentServiceLatencyHigh",service="payment-service",severity="warning"'
    return [
        ones(times, anchor, f'{order},alertstate="pending"', PENDING_AT_S, FIRING_AT_S + SCRAPE_S),
        ones(times, anchor, f'{order},alertstate="firing"', FIRING_AT_S),
        ones(times, anchor, f'{payment},alertstate="firing"', *PAYMENT_ALERT_S),
    ]


def binary(*names: str, package: str = "prometheus") -> str:
    """The path of the first installed of `names`; without any the test fails (CI must install it), it does not skip."""
    for name in names:
        if path := shutil.which(name):
            return path
    listed = " or ".join(f"`{name}`" for name in names)
    pytest.fail(
        f"{listed} is not on PATH: these tests run the real server. Install it with "
        f"`apt-get install {package}` (scripts/install-system-deps does).",
        pytrace=False,
    )


def _wait_ready(name: str, url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{name} exited with {process.returncode}:\n{log.read_text()[-3000:]}", pytrace=False)
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/-/ready", timeout=1.0).status_code == 200:
                return
        time.sleep(0.1)
    pytest.fail(f"{name} was not ready after {timeout_s:g} s:\n{log.read_text()[-3000:]}", pytrace=False)


@contextlib.contextmanager
def served(name: str, command: list[str], url: str, log: Path) -> Iterator[None]:
    """Run a Prometheus-family server (`/-/ready` at `url`), its output in `log`, until the block ends."""
    with log.open("wb") as log_file:
        process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        _wait_ready(name, url, process, log)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def incident_prometheus(
    root: Path, config: str = DEFAULT_CONFIG, flags: Sequence[str] = ()
) -> Iterator[PrometheusServer]:
    """Backfill the incident data up to now under `root`, serve it with `config` (prometheus.yml text) and
    extra command-line `flags` on a free port."""
    prometheus_bin, promtool_bin = binary("prometheus"), binary("promtool")
    anchor = int(time.time()) // SCRAPE_S * SCRAPE_S
    data, storage = root / "incident.om", root / "tsdb"
    data.write_text(incident_openmetrics(anchor))
    backfill = subprocess.run(
        [promtool_bin, "tsdb", "create-blocks-from", "openmetrics", str(data), str(storage)],
        capture_output=True,
        text=True,
        check=False,
    )
    if backfill.returncode != 0:
        pytest.fail(f"promtool backfill failed:\n{backfill.stdout}\n{backfill.stderr}", pytrace=False)
    config_file = root / "prometheus.yml"
    config_file.write_text(config)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        prometheus_bin,
        f"--config.file={config_file}",
        f"--storage.tsdb.path={storage}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
        *flags,
    ]
    with served("prometheus", command, url, root / "prometheus.log"):
        yield PrometheusServer(url=url, anchor=datetime.fromtimestamp(anchor, UTC))
