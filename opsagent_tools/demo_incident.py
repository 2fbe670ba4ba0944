"""The demo incident's backends, generated into a directory: recorded metrics, log files, a git repo, and the
cluster as its Kubernetes API shows it (`opsagent_tools.demo_cluster`, served while the demo runs).

order-service deploys v2.14.0, whose config cuts the DB connection pool from 50 to 10; within three
minutes its 5xx rate goes from 0.1% to 12%. The gateway logs show the upstream errors; the
order-service logs show pool exhaustion, a downstream symptom; its pods fail their liveness probes and crash-loop.
Everything is relative to `now`.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from opsagent_tools.actions import ActionWebhookSettings
from opsagent_tools.demo_cluster import RECORDING, DemoCluster, write_cluster
from opsagent_tools.logs import LogsSettings
from opsagent_tools.logs.files import FileLogSettings
from opsagent_tools.metrics import MetricAlias, MetricsSettings
from opsagent_tools.metrics.files import write_series
from opsagent_tools.repos import RepoSettings
from opsagent_tools.toolset import ActionsSettings, ToolsSettings

DEPLOY_AGO = timedelta(minutes=11)
ONSET_AGO = timedelta(minutes=10)
HISTORY = timedelta(hours=2)
SAMPLE_EVERY = 15.0
DEMO_SECRET_ENV = "OPSAGENT_DEMO_ACTION_SECRET"

DEMO_ALIASES = {
    "http_5xx_rate": MetricAlias(
        promql='http_requests_5xx_ratio{service="{service}"}',
        unit="percent",
        description="Share of requests answered with 5xx.",
    ),
    "http_request_rate": MetricAlias(
        promql='http_requests_per_second{service="{service}"}', unit="rps", description="Requests per second."
    ),
    "latency_p99": MetricAlias(
        promql='http_request_duration_p99_seconds{service="{service}"}',
        unit="seconds",
        description="99th percentile request latency.",
    ),
    "db_pool_active": MetricAlias(
        promql='db_pool_active_connections{service="{service}"}',
        unit="count",
        description="Database connections in use (the pool's size caps it).",
    ),
    "db_pool_waiting": MetricAlias(
        promql='db_pool_pending_requests{service="{service}"}',
        unit="count",
        description="Requests waiting for a database connection.",
    ),
    "cpu_usage": MetricAlias(
        promql='container_cpu_cores{container="{service}"}', unit="cores", description="CPU cores used."
    ),
    "memory_usage": MetricAlias(
        promql='container_memory_bytes{container="{service}"}', unit="bytes", description="Working-set memory."
    ),
}
"""Plain selectors over the recorded series (the files backend answers no PromQL functions)."""

Shape = Callable[[float], float]
"""A metric's value as a function of seconds before now."""


def write_demo_incident(root: Path, now: datetime, *, action_url: str) -> ToolsSettings:
    """Generate the incident's data under `root` and return the tool settings that read it (their clock is
    `now`, where the recording ends, so an investigation of it reads the same whenever it runs). The cluster is
    recorded at `root / RECORDING`; its `[tools.kubernetes]` comes from serving it (`ServedCluster`)."""
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(2014)
    write_series(root / "metrics.jsonl", _series(now, rng))
    logs = root / "logs"
    logs.mkdir(exist_ok=True)
    for service, lines in _logs(now, rng).items():
        (logs / f"{service}.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    repo = root / "repos" / "order-service"
    _git_repository(repo, now)
    write_cluster(root / RECORDING, DemoCluster(now))
    return ToolsSettings(
        metrics=MetricsSettings(url=f"file://{root / 'metrics.jsonl'}", aliases=DEMO_ALIASES),
        logs=LogsSettings(backend="files", files=FileLogSettings(directory=logs)),
        repos=RepoSettings(repositories={"order-service": str(repo)}),
        actions=ActionsSettings(webhook=ActionWebhookSettings(url=action_url, secret_env=DEMO_SECRET_ENV)),
        recorded_at=now,
    )


def _step(before: float, after: float, ramp_s: float = 180.0) -> Shape:
    """`before` until the onset, then a rise to `after` over `ramp_s` seconds (three minutes)."""
    onset = ONSET_AGO.total_seconds()

    def value(ago: float) -> float:
        if ago >= onset:
            return before
        return before + (after - before) * min(1.0, (onset - ago) / ramp_s)

    return value


def _series(now: datetime, rng: random.Random) -> list[tuple[str, dict[str, str], list[tuple[float, float]]]]:
    shapes: list[tuple[str, dict[str, str], Shape, float]] = [
        ("http_requests_5xx_ratio", {"service": "order-service"}, _step(0.001, 0.12), 0.0002),
        ("http_requests_5xx_ratio", {"service": "gateway"}, _step(0.0012, 0.031), 0.0002),
        ("http_requests_5xx_ratio", {"service": "payment-service"}, _step(0.0005, 0.0005), 0.0001),
        ("http_requests_per_second", {"service": "order-service"}, _step(240, 236), 6),
        ("http_requests_per_second", {"service": "gateway"}, _step(910, 905), 15),
        ("http_requests_per_second", {"service": "payment-service"}, _step(120, 118), 4),
        ("http_request_duration_p99_seconds", {"service": "order-service"}, _step(0.18, 30.0), 0.01),
        ("http_request_duration_p99_seconds", {"service": "gateway"}, _step(0.21, 15.0), 0.01),
        ("http_request_duration_p99_seconds", {"service": "payment-service"}, _step(0.09, 0.09), 0.005),
        ("db_pool_active_connections", {"service": "order-service"}, _step(22, 10), 2),
        ("db_pool_pending_requests", {"service": "order-service"}, _step(0, 187), 1),
        (
            "container_cpu_cores",
            {"container": "order-service", "pod": "order-service-7d9f8b6c4-x2lkq"},
            _step(0.6, 0.4),
            0.05,
        ),
        (
            "container_memory_bytes",
            {"container": "order-service", "pod": "order-service-7d9f8b6c4-x2lkq"},
            _step(6.1e8, 6.2e8),
            4e6,
        ),
    ]
    end = now.timestamp()
    count = int(HISTORY.total_seconds() // SAMPLE_EVERY)
    out = []
    for name, labels, shape, noise in shapes:
        points = []
        for i in range(count, -1, -1):
            ago = i * SAMPLE_EVERY
            value = shape(ago)
            points.append((end - ago, max(0.0, value + rng.gauss(0, noise) * (0.2 if value > 1 and noise < 1 else 1))))
        out.append((name, labels, points))
    return out


def _logs(now: datetime, rng: random.Random) -> dict[str, list[dict[str, object]]]:
    def at(ago: float) -> str:
        return (now - timedelta(seconds=ago)).isoformat().replace("+00:00", "Z")

    onset = ONSET_AGO.total_seconds()
    gateway: list[tuple[float, dict[str, object]]] = []
    orders: list[tuple[float, dict[str, object]]] = []
    payments: list[tuple[float, dict[str, object]]] = []
    for second in range(int(HISTORY.total_seconds() // 4)):
        ago = HISTORY.total_seconds() - second * 4
        payments.append((ago, {"level": "info", "msg": "POST /api/payments 200", "latency_ms": rng.randint(40, 95)}))
        if ago > onset:
            gateway.append((ago, {"level": "info", "msg": "GET /api/orders 200", "upstream": "order-service:8080"}))
    orders.append(
        (
            DEPLOY_AGO.total_seconds(),
            {
                "level": "info",
                "msg": "DeployEvent: order-service v2.14.0 rolled out (replaces v2.13.2)",
                "version": "v2.14.0",
            },
        )
    )
    orders.append(
        (
            DEPLOY_AGO.total_seconds() - 20,
            {"level": "info", "msg": "HikariPool-1 - Start completed (maximumPoolSize=10)"},
        )
    )
    tick = 0.0
    while tick < onset - 30:
        ago = onset - 30 - tick
        tick += rng.uniform(0.3, 0.7)
        waiting = rng.randint(150, 212)
        trace = f"{rng.getrandbits(64):016x}"
        gateway.append(
            (
                ago,
                {
                    "level": "error",
                    "status": 503,
                    "route": "/api/orders",
                    "upstream": "order-service:8080",
                    "msg": "upstream connect error or disconnect/reset before headers. reset reason: connection timeout",
                    "trace_id": trace,
                },
            )
        )
        if rng.random() < 0.6:
            orders.append(
                (
                    ago,
                    {
                        "level": "error",
                        "pod": "order-service-7d9f8b6c4-x2lkq",
                        "trace_id": trace,
                        "msg": f"HikariPool-1 - Connection is not available, request timed out after 30000ms "
                        f"(total=10, active=10, idle=0, waiting={waiting})",
                    },
                )
            )
        if rng.random() < 0.05:
            orders.append(
                (
                    ago,
                    {
                        "level": "warn",
                        "msg": f"HikariPool-1 - Pool stats (total=10, active=10, idle=0, waiting={waiting})",
                    },
                )
            )
    return {
        service: [{"ts": at(ago), "service": service, **fields} for ago, fields in sorted(lines, key=lambda x: -x[0])]
        for service, lines in (("gateway", gateway), ("order-service", orders), ("payment-service", payments))
    }


_FILES_V2_13_2 = {
    "config/database.yaml": "# Database access for order-service\nurl: postgres://orders-db.internal:5432/orders\n"
    "pool:\n  max_size: 50\n  min_idle: 10\n  connection_timeout_ms: 30000\n",
    "config/app.yaml": "http:\n  port: 8080\n  request_timeout_ms: 30000\nfeatures:\n  async_receipts: false\n",
    "src/orders/handler.py": "def create_order(db, order):\n    with db.connection() as conn:\n        return conn.insert('orders', order)\n",
    "CHANGELOG.md": "# Changelog\n\n## v2.13.2\n- Fix rounding of discounts.\n",
}
_FILES_V2_14_0 = {
    "config/database.yaml": "# Database access for order-service\nurl: postgres://orders-db.internal:5432/orders\n"
    "pool:\n  max_size: 10  # sized for the new pgbouncer proxy\n  min_idle: 10\n  connection_timeout_ms: 30000\n",
    "config/app.yaml": "http:\n  port: 8080\n  request_timeout_ms: 30000\nfeatures:\n  async_receipts: true\n",
    "CHANGELOG.md": "# Changelog\n\n## v2.14.0\n- Async receipts behind a feature flag.\n- Connection pool sized for pgbouncer.\n\n"
    "## v2.13.2\n- Fix rounding of discounts.\n",
}


def _git_repository(repo: Path, now: datetime) -> None:
    """order-service's history: v2.13.2 (yesterday), then v2.14.0 (deployed 11 minutes ago)."""
    if (repo / ".git").exists():
        return
    repo.mkdir(parents=True)
    _git(repo, now - timedelta(days=1), "init", "--quiet", "--initial-branch=main")
    for files, tag, when, message in (
        (_FILES_V2_13_2, "v2.13.2", now - timedelta(days=1), "Release v2.13.2"),
        (
            _FILES_V2_14_0,
            "v2.14.0",
            now - DEPLOY_AGO - timedelta(minutes=30),
            "Release v2.14.0: async receipts, pool for pgbouncer",
        ),
    ):
        for name, text in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
        _git(repo, when, "add", "--all")
        _git(repo, when, "commit", "--quiet", "-m", message)
        _git(repo, when, "tag", tag)


def _git(repo: Path, when: datetime, *args: str) -> None:
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S%z")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Dana Dev",
        "GIT_AUTHOR_EMAIL": "dana@example.com",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_NAME": "Dana Dev",
        "GIT_COMMITTER_EMAIL": "dana@example.com",
        "GIT_COMMITTER_DATE": stamp,
    }
    try:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise OSError("the demo builds a git repository with git, which is not installed: install git") from None
    except subprocess.CalledProcessError as exc:
        said = (exc.stderr or "").strip().splitlines()
        raise OSError(f"the demo's `git {args[0]}` failed: {said[-1] if said else f'exit {exc.returncode}'}") from None
