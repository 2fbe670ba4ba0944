"""What a person sees of each Kubernetes call: the workload's health, the object's state, the commonest event, the
container's lines, the newest revision's change and the worst usage, each in one line; against the fake API server."""

from __future__ import annotations

from typing import Any

import pytest

from worlds.kube_tools import call

HEADLINES = [
    ("k8s_pods", {"workload": "checkout"}, "checkout: 1/3 ready · 2 CrashLoopBackOff (OOMKilled, 13 restarts)"),
    ("k8s_pods", {"workload": "cart-db"}, "cart-db: 1/1 ready · 0 restarts"),
    ("k8s_pods", {}, "shop: 2/5 ready · 2 CrashLoopBackOff, 1 Pending (Unschedulable) · OOMKilled, 13 restarts"),
    ("k8s_pods", {"selector": "app=nothing"}, "app=nothing: no pods"),
    (
        "k8s_describe",
        {"kind": "pod", "name": "checkout-7d9f8c6b5-x2x9k"},
        "pod checkout-7d9f8c6b5-x2x9k: CrashLoopBackOff · 0/1 ready · 7 restarts · last OOMKilled",
    ),
    (
        "k8s_describe",
        {"kind": "deployment", "name": "checkout"},
        "deployment checkout: revision 4 · 1/3 ready · Available=False",
    ),
    ("k8s_describe", {"kind": "node", "name": "node-b"}, "node node-b: Ready · MemoryPressure"),
    ("k8s_events", {}, "60 events, 58 Warning · top BackOff ×42 on 2 objects"),
    (
        "k8s_events",
        {"object": "deployment/checkout"},
        "2 events, 0 Warning · top ScalingReplicaSet ×2 on deployment/checkout",
    ),
    ("k8s_events", {"object": "nothing-here"}, "no events since t-1h"),
    (
        "k8s_logs",
        {"pod": "checkout-7d9f8c6b5-x2x9k", "previous": True},
        "app previous run: 9 lines · 5 × heap usage <n>% of 230m after GC · 05:35–05:37 UTC",
    ),
    (
        "k8s_rollout_history",
        {"deployment": "checkout"},
        "checkout: revision 4, 42m ago · app memory limit 512Mi → 256Mi (+1 more) · 1/3 ready",
    ),
    (
        "k8s_resource_usage",
        {"workload": "checkout"},
        "checkout-7d9f8c6b5-x2x9k/app: cpu 352m, memory 251Mi of 256Mi limit (98%) · worst of 3",
    ),
]


@pytest.mark.parametrize(
    ("tool", "args", "headline"), HEADLINES, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(HEADLINES)]
)
async def test_each_call_reads_in_one_line(tools: Any, tool: str, args: dict[str, Any], headline: str) -> None:
    result = await call(tools, tool, **args)
    assert result.error is None, result.text
    assert result.headline == headline
    assert result.links == (), "a cluster has no public page unless one is configured"


async def test_a_failed_call_has_no_headline(tools: Any) -> None:
    result = await call(tools, "k8s_describe", kind="pod", name="nope")
    assert result.error is not None
    assert result.headline == ""
