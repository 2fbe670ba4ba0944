"""The demo incident's cluster: order-service's v2.14.0 rollout 11 minutes ago and what it did to the pods (liveness
probes that time out on the exhausted database pool, kills, then CrashLoopBackOff), the events the cluster recorded,
the rollout history, container logs and metrics-server's usage; beside it the healthy gateway and payment-service.

Everything is relative to `now`, where the recording ends, like the demo's metrics and logs; `write_cluster` keeps
it as one JSON file, which `read_cluster` gives back to be served again.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from opsagent_tools.demo_cluster.api import LogKey, LogLines
from opsagent_tools.demo_cluster.shapes import Env, Object, Shapes

RECORDING = "cluster.json"
"""Where, in the demo's data directory, `write_cluster` keeps the cluster."""
NAMESPACE = "prod"
REGISTRY = "registry.example.com"
APP = "order-service"
POOL_ERROR = (
    "HikariPool-1 - Connection is not available, request timed out after 30000ms (total=10, active=10, idle=0, "
    "waiting={waiting})"
)
PROBE_TIMEOUT = (
    'Liveness probe failed: Get "http://{ip}:8080/healthz": context deadline exceeded (Client.Timeout exceeded '
    "while awaiting headers)"
)
CRASH_LOOPING = (("m8wzt", "node-a", "10.244.1.23", 4), ("p4hnv", "node-b", "10.244.2.31", 3))
"""order-service v2.14.0's pods killed by their liveness probe until the kubelet backs off: (suffix, node, IP,
restarts). The third, x2lkq, is the one the demo's metrics and logs name: running again, its readiness probe
failing now and then."""


class DemoCluster:
    """The objects (`kind` and `apiVersion` included) and container logs of the demo's cluster at `now`."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.shapes = Shapes(now, NAMESPACE, REGISTRY)
        self.objects: list[Object] = []
        self.logs: dict[LogKey, LogLines] = {}
        self._order_service()
        self._healthy("gateway", "v1.9.3", "6f7d8c9b1", revision=12, pods=("h7k2p", "q9w4z"))
        self._healthy("payment-service", "v3.2.0", "84c6b5d7f", revision=4, pods=("t5n8r", "v2m6x"))
        self.objects += [self.shapes.node("node-a"), self.shapes.node("node-b")]

    def _order_service(self) -> None:
        shapes, stamp = self.shapes, self.shapes.stamp

        def env(receipts: bool) -> Env:
            secret = {"secretKeyRef": {"name": "orders-db", "key": "password"}}
            return [
                {"name": "LOG_FORMAT", "value": "json"},
                {"name": "FEATURE_ASYNC_RECEIPTS", "value": str(receipts).lower()},
                {"name": "DB_PASSWORD", "valueFrom": secret},
            ]

        deployed = shapes.template(APP, "v2.14.0", env(True), "7d9f8b6c4")
        current = shapes.replica_set(
            APP, 7, deployed, 11, pods=3, ready=1, cause="release v2.14.0: async receipts, pool for pgbouncer"
        )
        deployment = shapes.deployment(APP, 7, shapes.template(APP, "v2.14.0", env(True)), replicas=3, ready=1)
        self.objects += [
            deployment,
            shapes.replica_set(
                APP,
                5,
                shapes.template(APP, "v2.13.1", env(False), "6c8d9f7b5"),
                6 * 24 * 60,
                pods=0,
                ready=0,
                cause="release v2.13.1",
            ),
            shapes.replica_set(
                APP,
                6,
                shapes.template(APP, "v2.13.2", env(False), "5b7c9d6f8"),
                24 * 60,
                pods=0,
                ready=0,
                cause="release v2.13.2",
            ),
            current,
            shapes.event(
                deployment,
                "ScalingReplicaSet",
                f"Scaled up replica set {APP}-7d9f8b6c4 to 3",
                first=11,
                last=10.8,
                count=2,
                type="Normal",
            ),
            shapes.event(
                deployment,
                "ScalingReplicaSet",
                f"Scaled down replica set {APP}-5b7c9d6f8 to 0 from 3",
                first=10.9,
                last=10.6,
                count=3,
                type="Normal",
            ),
        ]
        for suffix, node, ip, restarts in CRASH_LOOPING:
            name = f"{APP}-7d9f8b6c4-{suffix}"
            back_off = f"back-off 1m20s restarting failed container={APP} pod={name}_{NAMESPACE}(uid-{name})"
            killed = {"exitCode": 143, "reason": "Error", "startedAt": stamp(3.5), "finishedAt": stamp(1.5)}
            pod = shapes.pod(
                current,
                suffix,
                node,
                ip,
                {"waiting": {"reason": "CrashLoopBackOff", "message": back_off}},
                last=killed,
                restarts=restarts,
            )
            self.objects += [
                pod,
                shapes.usage(pod, "18m", "402Mi"),
                shapes.event(pod, "Unhealthy", PROBE_TIMEOUT.format(ip=ip), first=9.5, last=1.6, count=14),
                shapes.event(
                    pod,
                    "Killing",
                    f"Container {APP} failed liveness probe, will be restarted",
                    first=8,
                    last=1.5,
                    count=restarts,
                    type="Normal",
                ),
                shapes.event(
                    pod,
                    "BackOff",
                    f"Back-off restarting failed container {APP} in pod {name}_{NAMESPACE}(uid-{name})",
                    first=6,
                    last=0.3,
                    count=11,
                ),
            ]
            self.logs[(NAMESPACE, name, APP, True)] = self.logs[(NAMESPACE, name, APP, False)] = self._run(suffix, 3.5)
        ended = {"exitCode": 143, "reason": "Error", "startedAt": stamp(10.5), "finishedAt": stamp(2.1)}
        survivor = shapes.pod(
            current, "x2lkq", "node-b", "10.244.2.17", {"running": {"startedAt": stamp(2)}}, last=ended, restarts=1
        )
        self.objects += [
            survivor,
            shapes.usage(survivor, "412m", "633Mi"),
            shapes.event(
                survivor,
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                first=9.8,
                last=0.2,
                count=31,
            ),
        ]
        self.logs[(NAMESPACE, survivor["metadata"]["name"], APP, False)] = self._run("x2lkq", 2, ended=False)
        self.logs[(NAMESPACE, survivor["metadata"]["name"], APP, True)] = self._run("x2lkq", 10.5)

    def _run(self, seed: str, started: float, *, ended: bool = True) -> LogLines:
        """One run of order-service v2.14.0, `started` minutes ago: its pool of 10 is full within seconds and
        requests wait for a connection until they time out; a run that `ended` was stopped by the kubelet."""
        began = self.now - timedelta(minutes=started)
        lines = [
            (began, {"level": "info", "msg": f"Starting {APP} v2.14.0 on :8080"}),
            (
                began + timedelta(seconds=2),
                {"level": "info", "msg": "HikariPool-1 - Start completed (maximumPoolSize=10)"},
            ),
        ]
        span = timedelta(minutes=started) - timedelta(minutes=1.6 if ended else 0.1) - timedelta(seconds=20)
        for i in range(24):
            waiting = 150 + (sum(map(ord, seed)) * (i + 7)) % 60  # varied, and the same on every run of the demo
            at = began + timedelta(seconds=20) + span * i / 24
            lines.append((at, {"level": "error", "msg": POOL_ERROR.format(waiting=waiting)}))
        if ended:
            lines.append(
                (self.now - timedelta(minutes=1.5), {"level": "info", "msg": "Received SIGTERM, shutting down"})
            )
        return LogLines([(at, json.dumps({"ts": at.isoformat(), **fields})) for at, fields in lines])

    def _healthy(self, app: str, version: str, pod_hash: str, *, revision: int, pods: tuple[str, ...]) -> None:
        env = [{"name": "LOG_FORMAT", "value": "json"}]
        current = self.shapes.replica_set(
            app,
            revision,
            self.shapes.template(app, version, env, pod_hash),
            9 * 24 * 60,
            pods=len(pods),
            ready=len(pods),
            cause=f"release {version}",
        )
        template = self.shapes.template(app, version, env)
        self.objects += [self.shapes.deployment(app, revision, template, replicas=len(pods), ready=len(pods)), current]
        for index, suffix in enumerate(pods):
            node, ip = (f"node-{'ab'[index % 2]}", f"10.244.{index % 2 + 1}.{40 + index}")
            running = {"running": {"startedAt": self.shapes.stamp(9 * 24 * 60)}}
            pod = self.shapes.pod(current, suffix, node, ip, running, minutes_ago=9 * 24 * 60)
            self.objects += [pod, self.shapes.usage(pod, "95m", "210Mi")]
            seen = [self.now - timedelta(seconds=20 * i) for i in range(30, 0, -1)]
            self.logs[(NAMESPACE, pod["metadata"]["name"], app, False)] = LogLines(
                [(at, json.dumps({"ts": at.isoformat(), "level": "info", "msg": "GET /healthz 200"})) for at in seen]
            )


def write_cluster(path: Path, cluster: DemoCluster) -> None:
    """The cluster as one JSON file, which `read_cluster` reads back."""
    logs = [
        {
            "namespace": ns,
            "pod": pod,
            "container": container,
            "previous": previous,
            "lines": [[at.isoformat(), text] for at, text in run.lines],
        }
        for (ns, pod, container, previous), run in cluster.logs.items()
    ]
    document = {
        "recorded_at": cluster.now.isoformat(),
        "namespace": NAMESPACE,
        "objects": cluster.objects,
        "logs": logs,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


def read_cluster(path: Path) -> tuple[datetime, list[Object], dict[LogKey, LogLines]]:
    """What `write_cluster` wrote: the recording's end, the objects and the container logs; a ValueError when the
    file is not one."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        logs = {
            (run["namespace"], run["pod"], run["container"], bool(run["previous"])): LogLines(
                [(datetime.fromisoformat(at), text) for at, text in run["lines"]]
            )
            for run in document["logs"]
        }
        return datetime.fromisoformat(document["recorded_at"]), list(document["objects"]), logs
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path} is not the demo's recorded cluster ({type(exc).__name__}: {exc})") from None
