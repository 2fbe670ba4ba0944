"""Kubernetes objects in the API's documented JSON shapes (as `kubectl get -o json` shows them), dated relative to a
clock: the building blocks of the demo's cluster. Workloads here have one container, named as their app."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

Object = dict[str, Any]
Env = list[dict[str, Any]]


class Shapes:
    """Objects of `namespace`, their times `minutes_ago` before `now`."""

    def __init__(self, now: datetime, namespace: str, registry: str) -> None:
        self.now, self.namespace, self.registry = now, namespace, registry

    def stamp(self, minutes_ago: float) -> str:
        """An RFC 3339 time, as the API writes one."""
        return (self.now - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def meta(self, name: str, minutes_ago: float, **extra: Any) -> Object:
        return {
            "name": name,
            "namespace": self.namespace,
            "uid": f"uid-{name}",
            "resourceVersion": "48170",
            "creationTimestamp": self.stamp(minutes_ago),
        } | extra

    def template(self, app: str, version: str, env: Env, pod_hash: str = "") -> Object:
        """A pod template: one container running `app` at `version`, with HTTP probes on :8080/healthz."""
        probe = {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "timeoutSeconds": 1}
        probe |= {"periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
        container = {
            "name": app,
            "image": f"{self.registry}/{app}:{version}",
            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            "env": env,
            "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "250m", "memory": "512Mi"}},
            "livenessProbe": probe | {"initialDelaySeconds": 20},
            "readinessProbe": probe,
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
        }
        labels = {"app": app} | ({"pod-template-hash": pod_hash} if pod_hash else {})
        return {"metadata": {"labels": labels}, "spec": {"containers": [container], "restartPolicy": "Always"}}

    def deployment(self, app: str, revision: int, template: Object, *, replicas: int, ready: int) -> Object:
        healthy = ready == replicas
        available = {
            "type": "Available",
            "status": str(healthy),
            "lastUpdateTime": self.stamp(10),
            "lastTransitionTime": self.stamp(10),
            "reason": "MinimumReplicasAvailable" if healthy else "MinimumReplicasUnavailable",
            "message": f"Deployment {'has' if healthy else 'does not have'} minimum availability.",
        }
        progressing = {
            "type": "Progressing",
            "status": "True",
            "reason": "NewReplicaSetAvailable",
            "lastUpdateTime": self.stamp(10.5),
            "lastTransitionTime": self.stamp(11),
            "message": f'ReplicaSet "{app}" has successfully progressed.',
        }
        annotations = {"deployment.kubernetes.io/revision": str(revision)}
        strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": self.meta(
                app, 200 * 24 * 60, labels={"app": app}, generation=revision, annotations=annotations
            ),
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": app}},
                "template": template,
                "strategy": strategy,
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
            },
            "status": {
                "observedGeneration": revision,
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": ready,
                "availableReplicas": ready,
                "unavailableReplicas": replicas - ready,
                "conditions": [available, progressing],
            },
        }

    def replica_set(
        self, app: str, revision: int, template: Object, minutes_ago: float, *, pods: int, ready: int, cause: str
    ) -> Object:
        """Revision `revision` of deployment `app`, `template` being its pods' (with their pod-template-hash)."""
        pod_hash = template["metadata"]["labels"]["pod-template-hash"]
        annotations = {
            "deployment.kubernetes.io/revision": str(revision),
            "deployment.kubernetes.io/desired-replicas": str(max(pods, 1)),
            "kubernetes.io/change-cause": cause,
        }
        owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": app, "uid": f"uid-{app}", "controller": True}
        labels = {"app": app, "pod-template-hash": pod_hash}
        metadata = self.meta(
            f"{app}-{pod_hash}", minutes_ago, labels=labels, annotations=annotations, ownerReferences=[owner]
        )
        return {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": metadata,
            "spec": {"replicas": pods, "selector": {"matchLabels": labels}, "template": template},
            "status": {"replicas": pods, "readyReplicas": ready, "availableReplicas": ready, "observedGeneration": 1},
        }

    def pod(
        self,
        replica_set: Object,
        suffix: str,
        node: str,
        ip: str,
        state: Object,
        *,
        last: Object | None = None,
        restarts: int = 0,
        minutes_ago: float = 11,
    ) -> Object:
        """A pod of `replica_set` on `node`, its container in `state` (running or waiting), `last` its previous end."""
        owner_name = replica_set["metadata"]["name"]
        template = replica_set["spec"]["template"]
        (container,) = template["spec"]["containers"]
        name, ready = f"{owner_name}-{suffix}", "running" in state
        condition = {"type": "Ready", "status": str(ready), "lastTransitionTime": self.stamp(1.5)}
        if not ready:
            condition |= {
                "reason": "ContainersNotReady",
                "message": f"containers with unready status: [{container['name']}]",
            }
        status = {
            "name": container["name"],
            "state": state,
            "lastState": {"terminated": last} if last else {},
            "ready": ready,
            "restartCount": restarts,
            "image": container["image"],
            "imageID": "",
            "started": ready,
            "containerID": f"containerd://{suffix}",
        }
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner_name, "uid": f"uid-{owner_name}"}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": self.meta(
                name, minutes_ago, labels=template["metadata"]["labels"], ownerReferences=[owner | {"controller": True}]
            ),
            "spec": template["spec"] | {"nodeName": node, "serviceAccountName": container["name"]},
            "status": {
                "phase": "Running",
                "conditions": [condition],
                "hostIP": "10.0.0.4",
                "podIP": ip,
                "startTime": self.stamp(minutes_ago),
                "qosClass": "Burstable",
                "containerStatuses": [status],
            },
        }

    def event(
        self, obj: Object, reason: str, message: str, *, first: float, last: float, count: int, type: str = "Warning"
    ) -> Object:
        """A core/v1 Event about `obj`, seen `count` times between `first` and `last` minutes ago."""
        kind, name = obj["kind"], obj["metadata"]["name"]
        involved = {
            "kind": kind,
            "namespace": self.namespace,
            "name": name,
            "uid": f"uid-{name}",
            "apiVersion": obj["apiVersion"],
        }
        source = "deployment-controller" if kind == "Deployment" else "kubelet"
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": self.meta(f"{name}.{reason.lower()}", first),
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type,
            "source": {"component": source},
            "reportingComponent": source,
            "firstTimestamp": self.stamp(first),
            "lastTimestamp": self.stamp(last),
            "count": count,
        }

    def usage(self, pod: Object, cpu: str, memory: str) -> Object:
        """metrics-server's PodMetrics of `pod`'s one container."""
        (container,) = pod["spec"]["containers"]
        metadata = pod["metadata"]
        return {
            "apiVersion": "metrics.k8s.io/v1beta1",
            "kind": "PodMetrics",
            "metadata": {"name": metadata["name"], "namespace": self.namespace, "creationTimestamp": self.stamp(0)},
            "timestamp": self.stamp(0.5),
            "window": "30s",
            "containers": [{"name": container["name"], "usage": {"cpu": cpu, "memory": memory}}],
        }

    def node(self, name: str) -> Object:
        """A healthy worker node."""
        conditions = [
            {"type": kind, "status": "False", "reason": f"KubeletHasNo{kind}", "message": f"kubelet has no {kind}"}
            for kind in ("MemoryPressure", "DiskPressure", "PIDPressure")
        ]
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
        }
        info = {
            "kubeletVersion": "v1.31.2",
            "containerRuntimeVersion": "containerd://1.7.22",
            "osImage": "Debian GNU/Linux 12",
            "kernelVersion": "6.1.0",
            "operatingSystem": "linux",
            "architecture": "amd64",
        }
        labels = {"kubernetes.io/hostname": name, "node-role.kubernetes.io/worker": ""}
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "uid": f"uid-{name}",
                "creationTimestamp": self.stamp(120 * 24 * 60),
                "labels": labels,
            },
            "spec": {},
            "status": {
                "conditions": [*conditions, ready],
                "capacity": {"cpu": "8", "memory": "32780300Ki", "pods": "110"},
                "allocatable": {"cpu": "7910m", "memory": "31729676Ki", "pods": "110"},
                "nodeInfo": info,
            },
        }
