"""The demo's cluster as a person tries it: served on 127.0.0.1 from its recording, read by the real Kubernetes tools
through the kubeconfig it writes, and answering in the REST API's own shapes (List objects, Status errors)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
import yaml

from opsagent_tools.demo_cluster import KUBECONFIG, RECORDING, DemoCluster, ServedCluster, write_cluster
from opsagent_tools.kubernetes import kubernetes_tools
from worlds.dispatch import dispatch_call

NOW = datetime(2026, 11, 30, 5, 40, tzinfo=UTC)


@pytest.fixture
async def served(tmp_path):
    write_cluster(tmp_path / RECORDING, DemoCluster(NOW))
    async with ServedCluster(tmp_path / RECORDING, tmp_path / KUBECONFIG) as cluster:
        yield cluster


async def call(served: ServedCluster, tool: str, **args) -> str:
    outcome = await dispatch_call(kubernetes_tools(served.settings, now=lambda: NOW), tool, **args)
    assert outcome.error is None, outcome.text
    return outcome.text


async def test_the_pods_crash_loop_after_the_rollout(served):
    pods = await call(served, "k8s_pods", workload="order-service")
    assert pods.startswith("deployment/order-service in prod: 3 desired, 1 ready, 3 up to date, 1 available")
    assert "3 pods: 2 CrashLoopBackOff, 1 Running; 8 restarts; last terminations: Error ×3" in pods
    events = await call(served, "k8s_events", object="order-service")
    assert "Warning BackOff pod/order-service-7d9f8b6c4-m8wzt ×11" in events
    assert 'Liveness probe failed: Get "http://10.244.1.23:8080/healthz": context deadline exceeded' in events
    assert "Normal ScalingReplicaSet deployment/order-service ×2, 11m..10m ago: Scaled up replica set" in events


async def test_the_rollout_history_names_the_release_and_what_changed(served):
    history = await call(served, "k8s_rollout_history", deployment="order-service")
    assert "revisions, newest first (3):" in history
    assert "  #7 order-service-7d9f8b6c4 created 11m ago; 3 pods, 1 ready" in history
    assert "change-cause: release v2.14.0: async receipts, pool for pgbouncer" in history
    assert "image registry.example.com/order-service:v2.13.2 → registry.example.com/order-service:v2.14.0" in history


async def test_logs_describe_and_usage_tell_the_same_story(served):
    logs = await call(served, "k8s_logs", pod="order-service-7d9f8b6c4-m8wzt", previous=True)
    assert "last run ended Error (exit 143)" in logs
    assert "24 × HikariPool-1 - Connection is not available, request timed out after 30000ms" in logs
    described = await call(served, "k8s_describe", kind="pod", name="order-service-7d9f8b6c4-m8wzt")
    assert "DB_PASSWORD=<secret orders-db key password>" in described, "a secret is a reference, never a value"
    usage = await call(served, "k8s_resource_usage")
    assert "order-service-7d9f8b6c4-x2lkq/order-service: cpu 412m, memory 633Mi of 1Gi limit (62%)" in usage


async def test_it_speaks_the_apis_shapes_behind_the_kubeconfigs_token(served):
    config = yaml.safe_load(served.kubeconfig.read_text())
    (user,) = config["users"]
    assert served.kubeconfig.stat().st_mode & 0o777 == 0o600, "the token is its owner's only"
    pods = f"{served.url}/api/v1/namespaces/prod/pods"
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {user['user']['token']}"}) as http:
        query = {"limit": 4, "labelSelector": "app in (order-service,gateway)"}
        first = (await http.get(pods, params=query)).json()
        rest = (await http.get(pods, params=query | {"continue": first["metadata"]["continue"]})).json()
        missing = await http.get(f"{pods}/order-service-0")
        bad = await http.get(pods, params={"limit": "many"})
        written = await http.delete(f"{pods}/order-service-7d9f8b6c4-x2lkq")
    async with httpx.AsyncClient() as anonymous:
        refused = await anonymous.get(pods)
    assert (first["kind"], first["apiVersion"], first["metadata"]["remainingItemCount"]) == ("PodList", "v1", 1)
    assert len(first["items"]) + len(rest["items"]) == 5, "order-service's 3 pods and the gateway's 2"
    assert "continue" not in rest["metadata"]
    assert (missing.status_code, missing.json()["kind"], missing.json()["reason"]) == (404, "Status", "NotFound")
    assert missing.json()["details"] == {"name": "order-service-0", "kind": "pods"}
    assert (bad.status_code, bad.json()["reason"]) == (400, "BadRequest")
    assert (written.status_code, written.json()["reason"]) == (405, "MethodNotAllowed")
    assert (refused.status_code, refused.json()["reason"]) == (401, "Unauthorized")


async def test_a_file_that_is_not_a_recording_is_said(tmp_path):
    (tmp_path / "cluster.json").write_text('{"objects": []}')
    with pytest.raises(ValueError, match=r"cluster.json is not the demo's recorded cluster \(KeyError: 'logs'\)"):
        async with ServedCluster(tmp_path / "cluster.json", tmp_path / "kubeconfig"):
            pass
