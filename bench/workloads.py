"""The tools each suite runs, registered identically for both kernels, and generated realistic tool outputs.

Outputs are deterministic (seeded by the call's arguments) and secret-free, so redaction leaves them unchanged.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from bench import baseline
from bench.models import ToolDice
from kernel import DEFAULT_REDACTOR, ToolRegistry, text_turn

PROBE_OUTPUT = "probe ok: 12 samples, all within limits"

LEVELS = ("INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG")
MODULES = ("http.server", "db.pool", "payments.client", "cache.redis", "orders.handler", "grpc.inventory")
MESSAGES = (
    "request completed status=200 route=/api/v2/checkout",
    "upstream connect error or disconnect/reset before headers; reset reason: connection failure",
    "connection pool exhausted (size=50, waiting=17); request queued",
    "slow query: SELECT * FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT 50",
    "circuit breaker payments-api transitioned CLOSED -> OPEN after 25 failures",
    "retrying call to inventory.Reserve attempt=2 backoff=200ms",
    "cache miss ratio above threshold ratio=0.41 window=5m",
    "GC pause 187ms heap_used=1.7GiB heap_max=2GiB",
    "deadline exceeded calling payments-api after 3000ms",
    "health check passed readiness=true liveness=true",
)
CODE = (
    "def reserve_stock(order: Order, timeout: float = 3.0) -> Reservation:",
    '    """Reserve every line item of the order, or none."""',
    "    with pool.connection(timeout=timeout) as conn:",
    "        rows = conn.execute(RESERVE_SQL, [item.sku for item in order.items])",
    "        if len(rows) != len(order.items):",
    "            raise OutOfStock(order.id, missing=diff(order.items, rows))",
    "    metrics.increment('inventory.reserve.ok', tags={'region': REGION})",
    "    return Reservation(order.id, rows, expires_at=now() + RESERVATION_TTL)",
    "",
    "class PaymentsClient:",
    "    def __init__(self, base_url: str, retries: int = 3) -> None:",
    "        self._session = http.Client(base_url, timeout=HTTP_TIMEOUT)",
    "    async def charge(self, order_id: str, cents: int) -> Charge:",
    "        for attempt in range(self.retries):",
    "            response = await self._session.post('/charges', json={'order': order_id, 'cents': cents})",
    "            if response.status < 500:",
    "                return Charge.parse(response.json())",
    "            await asyncio.sleep(0.2 * 2**attempt)",
)


def _rng(*parts: object) -> random.Random:
    return random.Random(json.dumps(parts, sort_keys=True))


def _fill(rng: random.Random, line: Callable[[int], str], header: str) -> str:
    """Lines from `line(n)` after `header` until a size drawn between 2 and 8 KB."""
    target = rng.randint(2048, 8000)
    lines, size, n = [header], len(header), 0
    while size < target:
        lines.append(line(n))
        size += len(lines[-1]) + 1
        n += 1
    text = "\n".join(lines)
    if DEFAULT_REDACTOR.redact(text) != text:
        raise AssertionError("generated output is not secret-free: the reachability check could not compare it")
    return text


def metrics_output(service: str, metric: str, window: str) -> str:
    rng = _rng("metrics", service, metric, window)
    base = rng.uniform(0.1, 5.0)

    def line(n: int) -> str:
        value = base * (1 + 6 * (n > 40)) * rng.uniform(0.8, 1.2)
        return f"2024-05-14T{9 + n // 60:02d}:{n % 60:02d}:00Z {service} {metric} value={value:.3f} p50={value * 0.4:.3f} samples={rng.randint(900, 1300)}"

    return _fill(
        rng,
        line,
        f"# {metric} for {service}, window {window}, 1m resolution (timestamp service metric value p50 samples)",
    )


def logs_output(service: str, query: str, window: str) -> str:
    rng = _rng("logs", service, query, window)

    def line(n: int) -> str:
        return (
            f"2024-05-14T10:{n // 60 % 60:02d}:{n % 60:02d}.{rng.randint(0, 999):03d}Z {rng.choice(LEVELS):5} {service} "
            f"[{rng.choice(MODULES)}] {rng.choice(MESSAGES)} req=r{rng.randint(10000, 99999)} dur={rng.randint(2, 4000)}ms"
        )

    return _fill(rng, line, f"# logs matching {query!r} for {service}, last {window} (newest last)")


def file_output(path: str) -> str:
    rng = _rng("file", path)
    start = rng.randint(1, 400)
    return _fill(rng, lambda n: f"{start + n:5d} | {CODE[(n + start) % len(CODE)]}", f"# {path} (from line {start})")


def pod_output(service: str) -> str:
    rng = _rng("pods", service)

    def line(n: int) -> str:
        restarts = rng.choice((0, 0, 0, 1, 4))
        return f"{service}-{7000 + n}-x{n % 9}  {rng.choice(('Running', 'Running', 'CrashLoopBackOff'))}  restarts={restarts}  cpu={rng.randint(50, 950)}m  mem={rng.randint(200, 1900)}Mi  node=ip-10-0-{n % 4}-{n + 10}"

    return _fill(rng, line, f"# pods of {service} (name status restarts cpu mem node)")


INVESTIGATION: list[tuple[str, dict[str, str]]] = [
    ("query_metrics", {"service": "checkout", "metric": "http_5xx_rate", "window": "60m"}),
    ("query_metrics", {"service": "checkout", "metric": "latency_p99_ms", "window": "60m"}),
    ("search_logs", {"service": "checkout", "query": "ERROR", "window": "30m"}),
    ("search_logs", {"service": "checkout", "query": "deadline exceeded", "window": "30m"}),
    ("query_metrics", {"service": "payments-api", "metric": "http_5xx_rate", "window": "60m"}),
    ("search_logs", {"service": "payments-api", "query": "ERROR", "window": "30m"}),
    ("describe_pods", {"service": "payments-api"}),
    ("query_metrics", {"service": "payments-api", "metric": "db_pool_waiting", "window": "60m"}),
    ("search_logs", {"service": "payments-api", "query": "pool exhausted", "window": "60m"}),
    ("read_file", {"path": "payments/client.py"}),
    ("read_file", {"path": "inventory/reserve.py"}),
    ("query_metrics", {"service": "inventory", "metric": "latency_p99_ms", "window": "60m"}),
    ("search_logs", {"service": "inventory", "query": "slow query", "window": "60m"}),
    ("describe_pods", {"service": "inventory"}),
    ("query_metrics", {"service": "postgres-orders", "metric": "active_connections", "window": "60m"}),
    ("search_logs", {"service": "postgres-orders", "query": "WARN", "window": "60m"}),
    ("read_file", {"path": "deploy/payments-api/values.yaml"}),
    ("query_metrics", {"service": "checkout", "metric": "gc_pause_ms", "window": "60m"}),
    ("search_logs", {"service": "checkout", "query": "circuit breaker", "window": "60m"}),
    ("describe_pods", {"service": "checkout"}),
]
ANSWER = "Root cause: payments-api DB pool exhaustion after the 10:41 traffic rise (steps 5, 8, 9); confidence medium."


def investigation_turns() -> list[str]:
    turns = [
        text_turn(name, f"Known: steps 1-{i} done. Why: check {name}.", **args)
        for i, (name, args) in enumerate(INVESTIGATION)
    ]
    return [*turns, text_turn("finish", "Known: enough evidence.", answer=ANSWER)]


def expected_output(name: str, args: dict[str, str]) -> str:
    match name:
        case "query_metrics":
            return metrics_output(**args)
        case "search_logs":
            return logs_output(**args)
        case "read_file":
            return file_output(**args)
        case _:
            return pod_output(**args)


def ours_probe_tools(output: str | None = None) -> ToolRegistry:
    registry = ToolRegistry()
    text = output or PROBE_OUTPUT

    @registry.register
    async def probe(i: int) -> str:
        """Probe the system once; `i` numbers the probe."""
        return text

    return registry


def baseline_probe_tools(output: str | None = None) -> baseline.ToolRegistry:
    registry = baseline.ToolRegistry()
    text = output or PROBE_OUTPUT

    @registry.register("Probe the system once; `i` numbers the probe.", _schema(i="integer"))
    async def probe(i: int) -> str:
        return text

    return registry


def ours_chaos_tools(dice: ToolDice) -> ToolRegistry:
    registry = ToolRegistry()

    async def query_metrics(service: str, step: int) -> str:
        """Metrics summary of a service; `step` selects which check to run."""
        return _chaos_result(dice, service, step)

    registry.register(query_metrics)
    return registry


def baseline_chaos_tools(dice: ToolDice) -> baseline.ToolRegistry:
    registry = baseline.ToolRegistry()

    @registry.register(
        "Metrics summary of a service; `step` selects which check to run.", _schema(service="string", step="integer")
    )
    async def query_metrics(service: str, step: int) -> str:
        return _chaos_result(dice, service, step)

    return registry


def _chaos_result(dice: ToolDice, service: str, step: int) -> str:
    if dice.fails():
        raise ConnectionError("metrics backend returned 503 Service Unavailable")
    return f"RESULT step={step} service={service}: p99 420 ms, 5xx 0.4%, saturation 61%"


DESCRIPTIONS = {
    "query_metrics": "A metric's 1-minute series for a service over a window. 5xx may originate at the gateway; then use service=gateway.",
    "search_logs": "Log lines of a service matching a query over a window, newest last.",
    "read_file": "A source or config file from the service repositories, with line numbers.",
    "describe_pods": "The Kubernetes pods of a service: status, restarts, resources, node.",
}


def ours_ops_tools(sink: list[str] | None = None) -> ToolRegistry:
    """The four realistic tools; each output is also appended to `sink` when given."""
    registry = ToolRegistry()

    def keep(text: str) -> str:
        if sink is not None:
            sink.append(text)
        return text

    async def query_metrics(service: str, metric: str, window: str = "30m") -> str:
        return keep(metrics_output(service, metric, window))

    async def search_logs(service: str, query: str, window: str = "30m") -> str:
        return keep(logs_output(service, query, window))

    async def read_file(path: str) -> str:
        return keep(file_output(path))

    async def describe_pods(service: str) -> str:
        return keep(pod_output(service))

    for fn in (query_metrics, search_logs, read_file, describe_pods):
        fn.__doc__ = DESCRIPTIONS[fn.__name__]
        registry.register(fn)
    return registry


def baseline_ops_tools() -> baseline.ToolRegistry:
    registry = baseline.ToolRegistry()
    reg = registry.register
    window = {"window": {"type": "string", "default": "30m"}}

    @reg(DESCRIPTIONS["query_metrics"], _schema(service="string", metric="string", optional=window))
    async def query_metrics(service: str, metric: str, window: str = "30m") -> str:
        return metrics_output(service, metric, window)

    @reg(DESCRIPTIONS["search_logs"], _schema(service="string", query="string", optional=window))
    async def search_logs(service: str, query: str, window: str = "30m") -> str:
        return logs_output(service, query, window)

    @reg(DESCRIPTIONS["read_file"], _schema(path="string"))
    async def read_file(path: str) -> str:
        return file_output(path)

    @reg(DESCRIPTIONS["describe_pods"], _schema(service="string"))
    async def describe_pods(service: str) -> str:
        return pod_output(service)

    return registry


def _schema(optional: dict[str, Any] | None = None, **required: str) -> dict[str, Any]:
    props: dict[str, Any] = {name: {"type": kind} for name, kind in required.items()}
    props.update(optional or {})
    return {"type": "object", "properties": props, "required": list(required)}
