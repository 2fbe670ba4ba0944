"""k8s_describe against the fake API server: pods, deployments and nodes with their events; Secrets stay unread."""

from __future__ import annotations

import pytest

from samples.kube_objects import LITERAL_TOKEN, SECRET_VALUE
from worlds.kube_tools import error_of, text_of, tools_for


async def test_a_crash_looping_pod_shows_its_oom_kill_limits_and_events(tools):
    text = await text_of(tools, "k8s_describe", kind="pod", name="checkout-7d9f8c6b5-x2x9k")
    lines = text.splitlines()
    assert lines[0] == "pod checkout-7d9f8c6b5-x2x9k in shop: CrashLoopBackOff, 0/1 ready, 7 restarts, age 42m"
    assert "controlled by replicaset/checkout-7d9f8c6b5" in lines[1]
    assert "conditions not true: Ready=False (ContainersNotReady: containers with unready status: [app])" in text
    assert "  state: Waiting CrashLoopBackOff (back-off 5m0s restarting failed container=app" in text
    assert "  last state: Terminated OOMKilled (exit 137) 2m ago, ran 3m" in text
    assert "  limits: memory=256Mi · requests: cpu=100m, memory=256Mi" in text
    assert "liveness http-get :8080/healthz (delay 10s, timeout 1s, period 10s, fails after 3)" in text
    assert "events (23):\n  Warning BackOff pod/checkout-7d9f8c6b5-x2x9k ×23, 38m..1m ago: Back-off restarting" in text


async def test_env_from_secrets_is_a_reference_and_literal_secrets_are_redacted(tools, cluster):
    text = await text_of(tools, "k8s_describe", kind="pod", name="checkout-7d9f8c6b5-x2x9k")
    assert "DB_PASSWORD=<secret shop-db key password>" in text
    assert "env from: <every key of secret checkout-env, values not shown>" in text
    assert "POD_NAME=<field metadata.name>" in text
    assert "LOG_LEVEL=info" in text
    assert LITERAL_TOKEN not in text, "a literal value that looks like a token goes through the redactor"
    assert "API_TOKEN=[REDACTED:" in text
    assert SECRET_VALUE not in text
    assert not [path for path in cluster.paths() if "secret" in path]


async def test_a_deployment_shows_conditions_and_its_pod_template(tools):
    text = await text_of(tools, "k8s_describe", kind="deploy", name="checkout")
    assert text.startswith("deployment checkout in shop: revision 4; 3 desired, 1 ready, 3 up to date, 1 available")
    assert (
        "condition Available=False MinimumReplicasUnavailable: Deployment does not have minimum availability." in text
    )
    assert "pod template:\ncontainer app: image registry.example.com/checkout:v3.8.0" in text
    assert (
        "  Normal ScalingReplicaSet deployment/checkout ×1, 42m ago: Scaled up replica set checkout-7d9f8c6b5 to 1"
        in text
    )


async def test_a_node_shows_pressure_taints_and_events_from_the_default_namespace(tools, cluster):
    text = await text_of(tools, "k8s_describe", kind="node", name="node-b")
    assert text.startswith("node node-b: Ready; roles worker; kubelet v1.31.2; age 120d")
    assert "condition MemoryPressure=True KubeletHasInsufficientMemory" in text
    assert "taints: dedicated=batch:NoSchedule" in text
    node_a = await text_of(tools, "k8s_describe", kind="node", name="node-a")
    assert "Warning OOMKilling node/node-a ×7, 30m..2m ago: Memory cgroup out of memory" in node_a
    assert cluster.requests[-1].path == "/api/v1/namespaces/default/events"
    assert cluster.requests[-1].query["fieldSelector"] == "involvedObject.kind=Node,involvedObject.name=node-a"


async def test_node_events_need_the_default_namespace(cluster, tmp_path):
    tools = tools_for(cluster, tmp_path, namespaces=("shop",))
    text = await text_of(tools, "k8s_describe", kind="node", name="node-a")
    assert "events: not read (node events are kept in namespace 'default', which is not allowed)" in text
    assert not [path for path in cluster.paths() if "/default/" in path]


async def test_an_unknown_name_names_the_close_ones(tools):
    error = await error_of(tools, "k8s_describe", kind="pod", name="checkout-7d9f8c6b5-x2x9")
    assert "No pod \"checkout-7d9f8c6b5-x2x9\" in namespace 'shop'. Nearest: checkout-7d9f8c6b5-x2x9k," in error
    kind = await error_of(tools, "k8s_describe", kind="service", name="checkout")
    assert "reads a pod, deployment or node, not 'service'" in kind


@pytest.mark.parametrize(
    ("kind", "name"),
    [("secret", "shop-db"), ("Secrets", "shop-db"), ("secrets.v1", "shop-db"), ("pod", "../secrets/shop-db"),
     ("pod", "x/../../secrets/shop-db"), ("node", "../api/v1/namespaces/shop/secrets/shop-db")],
)  # fmt: skip
async def test_secrets_are_refused_whatever_the_request(tools, cluster, kind, name):
    error = await error_of(tools, "k8s_describe", kind=kind, name=name)
    assert "Secrets are never readable" in error or "is not a Kubernetes object name" in error
    assert SECRET_VALUE not in error
    assert cluster.requests == [], "nothing was even asked of the server"


async def test_secret_references_in_other_tools_are_refused_too(tools, cluster):
    assert "Secrets are never readable" in await error_of(tools, "k8s_pods", workload="secret/shop-db")
    assert "Secrets are never readable" in await error_of(tools, "k8s_events", object="secret/shop-db")
    assert "Secrets are never readable" in await error_of(tools, "k8s_resource_usage", workload="secrets/shop-db")
    assert cluster.requests == []
