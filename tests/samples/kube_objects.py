"""Kubernetes objects in the API's documented JSON shapes, and a small cluster with a crash-looping, OOM-killed deploy.

`shop` holds checkout (revision 4 lowered its memory limit to 256Mi; two of three pods are OOMKilled in a loop),
checkout-api, the cart-db statefulset, an unschedulable pod, a Secret (which no tool may read) and their events.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from testkit.fakes.kube_api import LogLines

NOW = datetime(2026, 11, 30, 5, 40, tzinfo=UTC)
SECRET_VALUE = "hunter2-very-secret-db-password"
LITERAL_TOKEN = "tok_live_8f3b2a91c4d7e6f5a0b9c8d7"


def stamp(minutes_ago: float, now: datetime = NOW) -> str:
    return (now - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, namespace: str | None, minutes_ago: float, *, now: datetime = NOW, **extra: Any) -> dict[str, Any]:
    found = {
        "name": name,
        "uid": f"uid-{name}",
        "resourceVersion": "4811",
        "creationTimestamp": stamp(minutes_ago, now),
    }
    return found | ({"namespace": namespace} if namespace else {}) | extra


def container_spec(image: str, memory: str, *, env: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "app",
        "image": image if "/" in image else f"registry.example.com/checkout:{image}",  # a tag: checkout's
        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
        "resources": {"limits": {"memory": memory}, "requests": {"cpu": "100m", "memory": memory}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 10,
                          "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
        "terminationMessagePath": "/dev/termination-log",
        "imagePullPolicy": "IfNotPresent",
    }  # fmt: skip
    if env:
        spec["env"] = [
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "API_TOKEN", "value": LITERAL_TOKEN},
            {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "shop-db", "key": "password"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        ]
        spec["envFrom"] = [{"secretRef": {"name": "checkout-env"}}]
    return spec


def template(app: str, image: str, memory: str, pod_hash: str = "") -> dict[str, Any]:
    labels = {"app": app} | ({"pod-template-hash": pod_hash} if pod_hash else {})
    return {"metadata": {"labels": labels}, "spec": {"containers": [container_spec(image, memory)], "restartPolicy": "Always",
            "volumes": [{"name": "tls", "secret": {"secretName": "checkout-tls"}}]}}  # fmt: skip


def deployment(
    name: str, revision: int, image: str, memory: str, *, replicas: int = 3, ready: int = 3, now: datetime = NOW
) -> dict[str, Any]:
    annotations = {"deployment.kubernetes.io/revision": str(revision)}
    conditions = [
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "lastUpdateTime": stamp(40, now),
         "lastTransitionTime": stamp(42, now), "message": f'ReplicaSet "{name}-7d9f8c6b5" has successfully progressed.'},
        {"type": "Available", "status": "True" if ready == replicas else "False",
         "reason": "MinimumReplicasAvailable" if ready == replicas else "MinimumReplicasUnavailable",
         "lastUpdateTime": stamp(30, now), "lastTransitionTime": stamp(30, now),
         "message": "Deployment has minimum availability." if ready == replicas else "Deployment does not have minimum availability."},
    ]  # fmt: skip
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, "shop", 90 * 24 * 60, now=now, annotations=annotations, generation=4, labels={"app": name}),
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template(name, image, memory),
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                 "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
        "status": {"observedGeneration": 4, "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": ready,
                   "availableReplicas": ready, "unavailableReplicas": replicas - ready, "conditions": conditions},
    }  # fmt: skip


def replica_set(
    pod_hash: str,
    revision: int,
    image: str,
    memory: str,
    minutes_ago: float,
    pods: int,
    ready: int,
    cause: str = "",
    *,
    app: str = "checkout",
    now: datetime = NOW,
) -> dict[str, Any]:
    annotations = {"deployment.kubernetes.io/revision": str(revision), "deployment.kubernetes.io/desired-replicas": "3"}
    annotations |= {"kubernetes.io/change-cause": cause} if cause else {}
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": app, "uid": f"uid-{app}", "controller": True,
             "blockOwnerDeletion": True}  # fmt: skip
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta(f"{app}-{pod_hash}", "shop", minutes_ago, now=now, annotations=annotations,
                         ownerReferences=[owner], labels={"app": app, "pod-template-hash": pod_hash}),
        "spec": {"replicas": pods, "selector": {"matchLabels": {"app": app, "pod-template-hash": pod_hash}},
                 "template": template(app, image, memory, pod_hash)},
        "status": {"replicas": pods, "readyReplicas": ready, "availableReplicas": ready, "observedGeneration": 1},
    }  # fmt: skip


def pod(name: str, node: str | None, *, app: str = "checkout", rs: str = "checkout-7d9f8c6b5", minutes_ago: float = 42,
        state: dict[str, Any], last: dict[str, Any] | None = None, restarts: int = 0, phase: str = "Running",
        conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    ready = "running" in state
    status: dict[str, Any] = {
        "phase": phase,
        "conditions": conditions or [{"type": "Ready", "status": str(ready), "lastTransitionTime": stamp(2),
                                      **({} if ready else {"reason": "ContainersNotReady",
                                                          "message": "containers with unready status: [app]"})}],
        "qosClass": "Burstable",
    }  # fmt: skip
    if node:
        status |= {"hostIP": "10.0.0.4", "podIP": "10.244.1.17", "startTime": stamp(minutes_ago)}
        status["containerStatuses"] = [{
            "name": "app", "state": state, "lastState": ({"terminated": last} if last else {}), "ready": ready,
            "restartCount": restarts, "image": "registry.example.com/checkout:v3.8.0", "imageID": "", "started": ready,
            "containerID": "containerd://4f1c",
        }]  # fmt: skip
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": f"uid-{rs}", "controller": True}
    spec = template(app, "v3.8.0", "256Mi")["spec"] | ({"nodeName": node} if node else {})
    spec["serviceAccountName"] = app
    labels = {"app": app} | ({"pod-template-hash": rs.rsplit("-", 1)[1]} if "-" in rs else {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta(name, "shop", minutes_ago, labels=labels, ownerReferences=[owner]),
            "spec": spec, "status": status}  # fmt: skip


def oom_killed(minutes_ago: float, ran_minutes: float = 3) -> dict[str, Any]:
    return {"exitCode": 137, "reason": "OOMKilled", "startedAt": stamp(minutes_ago + ran_minutes), "finishedAt": stamp(minutes_ago),
            "containerID": "containerd://9a2e"}  # fmt: skip


def crash_loop() -> dict[str, Any]:
    message = "back-off 5m0s restarting failed container=app pod=checkout_shop"
    return {"waiting": {"reason": "CrashLoopBackOff", "message": message}}


def event(name: str, kind: str, obj: str, reason: str, message: str, *, first: float, last: float, count: int = 1,
          type: str = "Warning", namespace: str = "shop", series: bool = False) -> dict[str, Any]:  # fmt: skip
    """A core/v1 Event; `series` gives it the newer shape (eventTime and a series, no first/last timestamps)."""
    involved = {"kind": kind, "namespace": namespace if kind != "Node" else "", "name": obj, "uid": f"uid-{obj}",
                "apiVersion": "apps/v1" if kind in ("Deployment", "ReplicaSet") else "v1"}  # fmt: skip
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Event", "metadata": meta(name, namespace, first), "involvedObject": involved,
                            "reason": reason, "message": message, "type": type,
                            "source": {"component": "kubelet", "host": "node-a"}, "reportingComponent": "kubelet"}  # fmt: skip
    if series:
        body |= {"eventTime": stamp(first).replace("Z", ".000000Z"), "firstTimestamp": None, "lastTimestamp": None,
                 "series": {"count": count, "lastObservedTime": stamp(last).replace("Z", ".000000Z")}, "action": "Scheduling"}  # fmt: skip
    else:
        body |= {"firstTimestamp": stamp(first), "lastTimestamp": stamp(last), "count": count}
    return body


def node(name: str, *, memory_pressure: bool = False, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    conditions = [
        {"type": "MemoryPressure", "status": str(memory_pressure), "reason": "KubeletHasInsufficientMemory" if memory_pressure else "KubeletHasSufficientMemory",
         "message": "kubelet has insufficient memory available" if memory_pressure else "kubelet has sufficient memory available"},
        {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure", "message": "kubelet has no disk pressure"},
        {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"},
    ]  # fmt: skip
    info = {"kubeletVersion": "v1.31.2", "kubeProxyVersion": "v1.31.2", "containerRuntimeVersion": "containerd://1.7.22",
            "kernelVersion": "6.1.0", "osImage": "Debian GNU/Linux 12", "operatingSystem": "linux", "architecture": "amd64",
            "machineID": "m", "systemUUID": "s", "bootID": "b"}  # fmt: skip
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta(name, None, 120 * 24 * 60, labels={"node-role.kubernetes.io/worker": "", "kubernetes.io/hostname": name}),
            "spec": {"taints": taints or []},
            "status": {"conditions": conditions, "nodeInfo": info, "capacity": {"cpu": "4", "memory": "16318976Ki", "pods": "110"},
                       "allocatable": {"cpu": "3920m", "memory": "15267840Ki", "pods": "110"}}}  # fmt: skip


def usage(pod_name: str, cpu: str, memory: str) -> dict[str, Any]:
    return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
            "metadata": {"name": pod_name, "namespace": "shop", "creationTimestamp": stamp(0), "labels": {"app": "checkout"}},
            "timestamp": stamp(0.5), "window": "30s", "containers": [{"name": "app", "usage": {"cpu": cpu, "memory": memory}}]}  # fmt: skip


def shop_cluster() -> tuple[list[dict[str, Any]], dict[tuple[str, str, str, bool], LogLines]]:
    """The objects and container logs of the sample cluster."""
    running = {"running": {"startedAt": stamp(40)}}
    objects = [
        deployment("checkout", 4, "v3.8.0", "256Mi", ready=1),
        deployment("checkout-api", 1, "v1.2.0", "128Mi"),
        replica_set("6b7c5d8e2", 2, "v3.7.4", "512Mi", 9 * 24 * 60, 0, 0),
        replica_set("5d4c8b7f9", 3, "v3.8.0", "512Mi", 3 * 24 * 60, 0, 0, cause="release v3.8.0"),
        replica_set("7d9f8c6b5", 4, "v3.8.0", "256Mi", 42, 3, 1, cause="kubectl set resources deployment/checkout --limits=memory=256Mi"),
        pod("checkout-7d9f8c6b5-x2x9k", "node-a", state=crash_loop(), last=oom_killed(2), restarts=7),
        pod("checkout-7d9f8c6b5-q8zrw", "node-b", state=crash_loop(), last=oom_killed(5), restarts=6),
        pod("checkout-7d9f8c6b5-m2kxj", "node-b", state=running),
        pod("search-api-5f9c7d8b4-abcde", None, app="search-api", rs="search-api-5f9c7d8b4", minutes_ago=12, state={},
            phase="Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                          "message": "0/2 nodes are available: 2 Insufficient memory."}]),
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("cart-db", "shop", 200 * 24 * 60),
         "spec": {"replicas": 1, "serviceName": "cart-db", "selector": {"matchLabels": {"app": "cart-db"}},
                  "template": template("cart-db", "v15", "1Gi")},
         "status": {"replicas": 1, "readyReplicas": 1, "currentRevision": "cart-db-7c9", "updateRevision": "cart-db-7c9"}},
        pod("cart-db-0", "node-a", app="cart-db", rs="cart-db", minutes_ago=200 * 24 * 60, state={"running": {"startedAt": stamp(3000)}}),
        {"apiVersion": "v1", "kind": "Secret", "metadata": meta("shop-db", "shop", 3000), "type": "Opaque",
         "data": {"password": "aHVudGVyMi12ZXJ5LXNlY3JldC1kYi1wYXNzd29yZA=="}},
        event("checkout-7d9f8c6b5-x2x9k.1", "Pod", "checkout-7d9f8c6b5-x2x9k", "BackOff",
              "Back-off restarting failed container app in pod checkout-7d9f8c6b5-x2x9k_shop(uid-x2x9k)", first=38, last=1, count=23),
        event("checkout-7d9f8c6b5-q8zrw.1", "Pod", "checkout-7d9f8c6b5-q8zrw", "BackOff",
              "Back-off restarting failed container app in pod checkout-7d9f8c6b5-q8zrw_shop(uid-q8zrw)", first=36, last=3, count=19),
        event("checkout-7d9f8c6b5-m2kxj.1", "Pod", "checkout-7d9f8c6b5-m2kxj", "Unhealthy",
              "Readiness probe failed: HTTP probe failed with statuscode: 503", first=20, last=4, count=4),
        event("checkout.1", "Deployment", "checkout", "ScalingReplicaSet",
              "Scaled up replica set checkout-7d9f8c6b5 to 1", first=42, last=42, type="Normal"),
        event("checkout.2", "Deployment", "checkout", "ScalingReplicaSet",
              "Scaled down replica set checkout-5d4c8b7f9 to 0 from 1", first=39, last=39, type="Normal"),
        event("search-api-5f9c7d8b4-abcde.1", "Pod", "search-api-5f9c7d8b4-abcde", "FailedScheduling",
              "0/2 nodes are available: 2 Insufficient memory. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
              first=12, last=2, count=12, series=True),
        event("cart-db-0.1", "Pod", "cart-db-0", "Pulled", 'Container image "registry.example.com/checkout:v15" already present on machine',
              first=200, last=190, type="Normal"),
        event("node-a.1", "Node", "node-a", "OOMKilling", "Memory cgroup out of memory: Killed process 4242 (java) total-vm:2461008kB, anon-rss:262144kB",
              first=30, last=2, count=7, namespace="default"),
        node("node-a"),
        node("node-b", memory_pressure=True, taints=[{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]),
        usage("checkout-7d9f8c6b5-x2x9k", "352m", "251Mi"),
        usage("checkout-7d9f8c6b5-q8zrw", "298m", "203Mi"),
        usage("checkout-7d9f8c6b5-m2kxj", "120m", "190Mi"),
        {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "metadata": {"name": "node-a"}, "timestamp": stamp(0.5),
         "window": "20.05s", "usage": {"cpu": "1215487301n", "memory": "13172184Ki"}},
        {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics", "metadata": {"name": "node-b"}, "timestamp": stamp(0.5),
         "window": "20.05s", "usage": {"cpu": "802113427n", "memory": "14680064Ki"}},
    ]  # fmt: skip
    minute = timedelta(minutes=1)
    crashed = [
        (NOW - 5 * minute, "Starting checkout v3.8.0 on :8080 (JVM max heap 230m)"),
        (NOW - 4.5 * minute, json.dumps({"level": "info", "msg": "price cache warmed with 120000 entries"})),
        *[(NOW - (4 - i * 0.2) * minute, json.dumps({"level": "warn", "msg": f"heap usage {90 + i}% of 230m after GC"})) for i in range(5)],
        (NOW - 2.1 * minute, "ERROR java.lang.OutOfMemoryError: Java heap space"),
        (NOW - 2.1 * minute, "\tat com.acme.checkout.PriceCache.put(PriceCache.java:88)"),
    ]  # fmt: skip
    logs = {
        ("shop", "checkout-7d9f8c6b5-x2x9k", "app", True): LogLines(crashed),
        ("shop", "checkout-7d9f8c6b5-x2x9k", "app", False): LogLines([(NOW - 1 * minute, "Starting checkout v3.8.0 on :8080 (JVM max heap 230m)")]),
        ("shop", "checkout-7d9f8c6b5-m2kxj", "app", False): LogLines(
            [(NOW - (30 - i) * minute, json.dumps({"level": "info", "msg": f"GET /healthz 200 in {i % 7 + 1}ms"})) for i in range(27)]
            + [(NOW - 3 * minute, json.dumps({"level": "error", "msg": "price cache fill failed: upstream pricing timed out after 2000ms"}))]
            + [(NOW - (3 - i) * minute, json.dumps({"level": "info", "msg": f"GET /healthz 200 in {i + 1}ms"})) for i in range(3)]
        ),
    }  # fmt: skip
    return objects, logs
