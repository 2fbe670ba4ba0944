"""Live CPU and memory from metrics-server (the metrics.k8s.io API), set against each container's requests and limits.

Many clusters run without metrics-server: then the tool says so plainly and names the tools that can stand in.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from lightkube.resources.core_v1 import Node, Pod

from kernel import ToolFailure, ToolOutput
from opsagent_tools.kubernetes.api import METRICS_ROUTES, KubeApi, KubeApiError, KubeSession
from opsagent_tools.kubernetes.objects import format_bytes, format_cpu, percent, quantity
from opsagent_tools.kubernetes.workloads import find_workload
from opsagent_tools.time_words import parse_iso

MAX_ROWS = 40
METRICS_ABSENT = (
    "metrics-server is not installed in this cluster (the metrics.k8s.io API answered 404), so live CPU and memory "
    "usage is unavailable."
)
USAGE_ELSEWHERE = (
    "Use query_metrics with memory_usage or cpu_usage (cAdvisor through Prometheus) if it is configured, and "
    "k8s_pods / k8s_describe for OOMKilled terminations and the configured limits."
)
METRICS_UNAVAILABLE = (
    "metrics-server is registered but not answering ({detail}), so live usage is unavailable right now."
)
USAGE_ELSEWHERE_NOW = (
    "Use query_metrics (memory_usage, cpu_usage) if configured, and k8s_pods / k8s_describe for terminations and "
    "limits."
)


@dataclass(frozen=True, slots=True)
class Usage:
    """One container's (or node's) CPU in cores and memory in bytes, with what it is measured against."""

    name: str
    cpu: Decimal | None
    memory: Decimal | None
    cpu_of: Decimal | None = None
    memory_of: Decimal | None = None
    against: str = "limit"

    def text(self) -> str:
        cpu_of = f" of {format_cpu(self.cpu_of)} {self.against}" if self.cpu_of else ""
        memory_of = f" of {format_bytes(self.memory_of)} {self.against}" if self.memory_of else f" (no {self.against})"
        return (
            f"  {self.name}: cpu {format_cpu(self.cpu)}{cpu_of}{percent(self.cpu, self.cpu_of)}, "
            f"memory {format_bytes(self.memory)}{memory_of}{percent(self.memory, self.memory_of)}"
        )

    def pressure(self) -> float:
        """How close memory is to its bound (or its size when unbounded), for ordering the worst first."""
        if self.memory is None:
            return -1.0
        return float(self.memory / self.memory_of) if self.memory_of else float(self.memory) / 2**40


async def usage_output(api: KubeApi, *, namespace: str, workload: str, nodes: bool, now: datetime) -> ToolOutput:
    """What k8s_resource_usage answers; for people, the container (or node) nearest its memory bound."""
    async with api.session() as kube:
        if nodes:
            return await _node_usage(kube, now)
        api.check_namespace(namespace)
        labels, scope = "", namespace
        if workload:
            found = await find_workload(kube, namespace, workload)
            labels, scope = found.selector, f"{found.kind}/{found.name} in {namespace}"
        metrics, pods = await asyncio.gather(
            _metrics(kube, "pods", namespace, labels), kube.list(Pod, namespace, labels=labels)
        )
    limits = {
        (pod.metadata.name, c.name): c.resources
        for pod in pods.items
        if pod.metadata is not None and pod.spec is not None
        for c in pod.spec.containers
    }
    rows = []
    for item in metrics.get("items") or []:
        pod_name = (item.get("metadata") or {}).get("name", "?")
        for container in item.get("containers") or []:
            resources = limits.get((pod_name, container.get("name")))
            bound = (resources.limits if resources else None) or {}
            rows.append(
                Usage(
                    f"{pod_name}/{container.get('name')}",
                    quantity((container.get("usage") or {}).get("cpu")),
                    quantity((container.get("usage") or {}).get("memory")),
                    quantity(bound.get("cpu")),
                    quantity(bound.get("memory")),
                )
            )
    if not rows:
        text = f"resource usage in {scope}: metrics-server has no samples for these pods (new or not running?)"
        return ToolOutput(text, headline="no samples from metrics-server")
    rows.sort(key=Usage.pressure, reverse=True)
    lines = [f"resource usage in {scope} ({_sampled(metrics, now)}), worst memory first:"]
    lines += [row.text() for row in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        lines.append(f"… {len(rows) - MAX_ROWS} more containers")
    return ToolOutput("\n".join(lines), headline=_worst(rows))


async def _node_usage(kube: KubeSession, now: datetime) -> ToolOutput:
    metrics, nodes = await asyncio.gather(_metrics(kube, "nodes", None, ""), kube.list(Node))
    allocatable = {
        n.metadata.name: (n.status.allocatable if n.status else None) or {} for n in nodes.items if n.metadata
    }
    rows = [
        Usage(
            name := (item.get("metadata") or {}).get("name", "?"),
            quantity((item.get("usage") or {}).get("cpu")),
            quantity((item.get("usage") or {}).get("memory")),
            quantity(allocatable.get(name, {}).get("cpu")),
            quantity(allocatable.get(name, {}).get("memory")),
            against="allocatable",
        )
        for item in metrics.get("items") or []
    ]
    rows.sort(key=Usage.pressure, reverse=True)
    lines = [f"node usage ({_sampled(metrics, now)}), worst memory first:"]
    return ToolOutput("\n".join(lines + [row.text() for row in rows[:MAX_ROWS]]), headline=_worst(rows))


def _worst(rows: list[Usage]) -> str:
    """ "checkout-x/app: cpu 352m, memory 251Mi of 256Mi limit (98%) · worst of 3"."""
    if not rows:
        return "no samples from metrics-server"
    return f"{rows[0].text().strip()}" + (f" · worst of {len(rows)}" if len(rows) > 1 else "")


async def _metrics(kube: KubeSession, kind: str, namespace: str | None, labels: str) -> dict[str, Any]:
    try:
        return await kube.list_json(METRICS_ROUTES[kind], namespace, labels=labels)
    except KubeApiError as exc:
        if exc.code == 404:
            raise ToolFailure(METRICS_ABSENT, hint=USAGE_ELSEWHERE) from None
        if exc.code == 503:
            detail = f"HTTP 503 {exc.reason}".strip()
            raise ToolFailure(METRICS_UNAVAILABLE.format(detail=detail), hint=USAGE_ELSEWHERE_NOW) from None
        raise


def _sampled(metrics: dict[str, Any], now: datetime) -> str:
    items = metrics.get("items") or []
    stamp = parse_iso(str(items[0].get("timestamp") or "")) if items else None
    window = items[0].get("window", "?") if items else "?"
    when = f", {int((now - stamp).total_seconds())}s ago" if stamp is not None else ""
    return f"metrics-server, averaged over {window}{when}"
