"""`discover` lists Kubernetes namespaces and workloads from the fake API server, within the allowlist: the
allowed namespaces with their workload counts, each workload with its ready replicas, never another namespace."""

from __future__ import annotations

import pytest

from opsagent_tools.toolset import ToolsSettings, build_tools
from samples.kube_objects import NOW, meta, shop_cluster
from testkit.fakes.kube_api import FakeKubeApi
from worlds.dispatch import dispatch_call
from worlds.kube_tools import settings_for


def discover_over(server: FakeKubeApi, tmp_path, **overrides):
    return build_tools(ToolsSettings(kubernetes=settings_for(server, tmp_path, **overrides)), now=lambda: NOW)


async def listing(tools, **args) -> str:
    outcome = await dispatch_call(tools, "discover", **args)
    assert outcome.error is None, outcome.text
    return outcome.text


async def test_the_allowed_namespaces_and_their_workloads(cluster, tmp_path):
    tools = discover_over(cluster, tmp_path)
    namespaces = await listing(tools, kind="kubernetes_namespaces")
    assert namespaces.startswith(
        "Namespaces the tools may read, from the allowlist (2): shop (3 workloads), default (0 workloads)"
    )
    workloads = await listing(tools, kind="kubernetes_workloads", filter="shop")
    assert workloads.splitlines()[:2] == ["Workloads in 1 namespace (ready/desired):", "shop:"]
    assert "  deployment/checkout: 1/3 ready" in workloads
    assert "  statefulset/cart-db: 1/1 ready" in workloads
    every = await listing(tools, kind="kubernetes_workloads")
    assert "default:\n  no deployments, statefulsets or daemonsets" in every
    assert all("/namespaces/shop/" in path or "/namespaces/default/" in path for path in cluster.paths())


async def test_a_namespace_outside_the_allowlist_is_refused_before_any_request(cluster, tmp_path):
    tools = discover_over(cluster, tmp_path)
    outcome = await dispatch_call(tools, "discover", kind="kubernetes_workloads", filter="payments")
    assert outcome.error is not None
    assert "namespace 'payments' is not allowed; allowed: shop, default" in outcome.text
    assert cluster.paths() == []
    missing = await listing(tools, kind="kubernetes_namespaces", filter="pay")
    assert "pay" in missing
    assert "shop" in missing


async def test_a_namespace_the_role_cannot_read_says_so_and_the_rest_still_lists(cluster, tmp_path):
    cluster.forbid("deployments", "default")
    tools = discover_over(cluster, tmp_path)
    namespaces = await listing(tools, kind="kubernetes_namespaces")
    assert "default (not readable: HTTP 403)" in namespaces
    every = await listing(tools, kind="kubernetes_workloads")
    assert "default:\n  not readable: Kubernetes does not allow OpsAgent to list deployments" in every
    assert "  deployment/checkout: 1/3 ready" in every


@pytest.mark.parametrize("part", [None, "sho"])
async def test_with_every_namespace_allowed_the_cluster_lists_them(tmp_path, part):
    objects, logs = shop_cluster()
    objects += [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(name, None, 9000)}
        for name in ("shop", "kube-system")
    ]
    async with FakeKubeApi(objects, now=NOW, logs=logs) as server:
        tools = discover_over(server, tmp_path, namespaces=(), all_namespaces=True)
        found = await listing(tools, kind="kubernetes_namespaces", **({"filter": part} if part else {}))
    if part is None:
        assert (
            "from every namespace (all_namespaces = true) (2): kube-system (0 workloads), shop (3 workloads)" in found
        )
    else:
        assert "(1): shop (3 workloads)" in found
