"""k8s_resource_usage against the fake API server: metrics.k8s.io against limits, and without metrics-server."""

from __future__ import annotations

import pytest

from samples.kube_objects import NOW, shop_cluster
from testkit.fakes.kube_api import FakeKubeApi
from worlds.kube_tools import error_of, text_of, tools_for


async def test_a_workloads_containers_against_their_memory_limits_worst_first(tools, cluster):
    text = await text_of(tools, "k8s_resource_usage", workload="checkout")
    assert text.splitlines() == [
        "resource usage in deployment/checkout in shop (metrics-server, averaged over 30s, 30s ago), worst memory first:",
        "  checkout-7d9f8c6b5-x2x9k/app: cpu 352m, memory 251Mi of 256Mi limit (98%)",
        "  checkout-7d9f8c6b5-q8zrw/app: cpu 298m, memory 203Mi of 256Mi limit (79%)",
        "  checkout-7d9f8c6b5-m2kxj/app: cpu 120m, memory 190Mi of 256Mi limit (74%)",
    ]
    (metrics,) = [r for r in cluster.requests if r.path == "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"]
    assert metrics.query["labelSelector"] == "app=checkout"


async def test_nodes_against_allocatable_in_nanocores_and_kibibytes(tools):
    text = await text_of(tools, "k8s_resource_usage", nodes=True)
    assert text.splitlines() == [
        "node usage (metrics-server, averaged over 20.05s, 30s ago), worst memory first:",
        "  node-b: cpu 802m of 3.92 allocatable (20%), memory 14Gi of 14.6Gi allocatable (96%)",
        "  node-a: cpu 1.22 of 3.92 allocatable (31%), memory 12.6Gi of 14.6Gi allocatable (86%)",
    ]


async def test_without_metrics_server_it_says_so_and_names_the_alternatives(tmp_path):
    objects, logs = shop_cluster()
    async with FakeKubeApi(objects, now=NOW, logs=logs, metrics=False) as server:
        error = await error_of(tools_for(server, tmp_path), "k8s_resource_usage")
    assert "metrics-server is not installed in this cluster (the metrics.k8s.io API answered 404)" in error
    assert "query_metrics with memory_usage" in error


@pytest.mark.parametrize("nodes", [False, True])
async def test_a_registered_but_down_metrics_server_is_not_called_absent(tools, cluster, nodes):
    cluster.metrics_status = 503
    error = await error_of(tools, "k8s_resource_usage", nodes=nodes)
    assert "metrics-server is registered but not answering (HTTP 503 ServiceUnavailable)" in error
