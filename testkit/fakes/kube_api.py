"""A fake Kubernetes API server on 127.0.0.1 that speaks the REST API's documented shapes, for the Kubernetes tools.

List objects (`kind: PodList`, `metadata.resourceVersion`, `continue` under `limit`), `Status` errors (401, 403 with
reason and details, 404, 400 from the kubelet), watch-free GETs under /api/v1 and /apis/<group>/<version>, container
logs streamed as plain text (previous, container, tailLines, sinceSeconds, timestamps, limitBytes), metrics.k8s.io
(or a 404 when metrics-server is absent), label and field selectors, a bearer token, and delays on demand.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from aiohttp import web

from testkit.servers.local_server import LocalServer

TOKEN = "test-service-account-token"
USER = "system:serviceaccount:opsagent:opsagent"
METRICS_PREFIX = "apis/metrics.k8s.io/v1beta1"
KINDS: dict[str, tuple[str, str, bool]] = {
    "Pod": ("api/v1", "pods", True),
    "Event": ("api/v1", "events", True),
    "Node": ("api/v1", "nodes", False),
    "Namespace": ("api/v1", "namespaces", False),
    "Secret": ("api/v1", "secrets", True),
    "ConfigMap": ("api/v1", "configmaps", True),
    "Deployment": ("apis/apps/v1", "deployments", True),
    "ReplicaSet": ("apis/apps/v1", "replicasets", True),
    "StatefulSet": ("apis/apps/v1", "statefulsets", True),
    "DaemonSet": ("apis/apps/v1", "daemonsets", True),
    "PodMetrics": (METRICS_PREFIX, "pods", True),
    "NodeMetrics": (METRICS_PREFIX, "nodes", False),
}
"""kind → (path prefix, plural, namespaced), as the API's discovery documents them."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    authorization: str


@dataclass
class LogLines:
    """One container run's log: (time, text) lines, oldest first."""

    lines: list[tuple[datetime, str]] = field(default_factory=list)


def status(code: int, reason: str, message: str, **details: Any) -> web.Response:
    """A `Status` object, exactly as the API server sends one with an error code."""
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "details": details, "code": code}  # fmt: skip
    return web.json_response(body, status=code)


def _lookup(obj: Any, dotted: str) -> str:
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return "" if obj is None else str(obj)


def field_matches(selector: str, obj: dict[str, Any]) -> bool:
    """A field selector: `a.b=v`, `a.b==v`, `a.b!=v`, comma-separated (all must hold)."""
    for term in filter(None, selector.split(",")):
        key, op, value = re.match(r"([^=!]+)(!=|==|=)(.*)", term).groups()  # type: ignore[union-attr]
        if (_lookup(obj, key) == value) != (op != "!="):
            return False
    return True


def label_matches(selector: str, labels: dict[str, str]) -> bool:
    """A label selector: k=v, k==v, k!=v, k in (a,b), k notin (a,b), k, !k; comma-separated outside parentheses."""
    for term in (t.strip() for t in re.split(r",(?![^()]*\))", selector) if t.strip()):
        if match := re.fullmatch(r"(\S+)\s+(in|notin)\s+\((.*)\)", term):
            key, op, values = match[1], match[2], {v.strip() for v in match[3].split(",")}
            if (labels.get(key) in values) != (op == "in") or (op == "in" and key not in labels):
                return False
        elif match := re.fullmatch(r"([^=!]+)(!=|==|=)(.*)", term):
            key, op, value = match[1].strip(), match[2], match[3].strip()
            if (labels.get(key) == value) != (op != "!="):
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


class FakeKubeApi(LocalServer):
    """Objects by kind, container logs by (namespace, pod, container, previous), RBAC refusals and delays on demand."""

    shutdown_timeout = 0.5

    def __init__(
        self,
        objects: list[dict[str, Any]],
        *,
        now: datetime,
        logs: dict[tuple[str, str, str, bool], LogLines] | None = None,
        metrics: bool = True,
    ) -> None:
        super().__init__()
        self.objects, self.now, self.logs, self.metrics = objects, now, logs or {}, metrics
        self.requests: list[Request] = []
        self.forbidden: set[tuple[str, str | None]] = set()
        """(plural, namespace or None for every namespace) that the service account may not read."""
        self.delay_s = 0.0
        self.metrics_status = 0
        """When set (e.g. 503), metrics.k8s.io answers with it: registered, but metrics-server is down."""
        self.bodies: dict[str, tuple[int, bytes]] = {}
        """path -> (status, a body sent as it is, as JSON): what a broken or hostile proxy in front of the API sends."""

    def forbid(self, plural: str, namespace: str | None = None) -> None:
        self.forbidden.add((plural, namespace))

    def kubeconfig(self, directory: Path, *, token: str = TOKEN, context: str = "test") -> Path:
        """A kubeconfig for this server (JSON is YAML), with a second context that points nowhere."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": context,
            "clusters": [{"name": "fake", "cluster": {"server": self.url}},
                         {"name": "elsewhere", "cluster": {"server": "http://127.0.0.1:9"}}],
            "users": [{"name": "sa", "user": {"token": token}}],
            "contexts": [{"name": context, "context": {"cluster": "fake", "user": "sa", "namespace": "shop"}},
                         {"name": "elsewhere", "context": {"cluster": "elsewhere", "user": "sa"}}],
        }  # fmt: skip
        path = directory / "kubeconfig"
        path.write_text(json.dumps(config))
        return path

    def paths(self) -> list[str]:
        return [request.path for request in self.requests]

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._handle)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(
            Request(request.method, request.path, dict(request.query), request.headers.get("Authorization", ""))
        )
        if self.delay_s:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.delay_s)
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return status(401, "Unauthorized", "Unauthorized")
        if request.path in self.bodies:
            code, body = self.bodies[request.path]
            return web.Response(body=body, status=code, content_type="application/json")
        if request.method != "GET":
            return status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        parts = request.path.strip("/").split("/")
        prefix_len = 2 if parts[0] == "api" else 3
        prefix, rest = "/".join(parts[:prefix_len]), parts[prefix_len:]
        if prefix == METRICS_PREFIX and (not self.metrics or self.metrics_status):
            if self.metrics_status:
                return status(
                    self.metrics_status, "ServiceUnavailable", "the server is currently unable to handle the request"
                )
            return status(404, "NotFound", "the server could not find the requested resource")
        namespace = None
        if rest[:1] == ["namespaces"] and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        kinds = [k for k, (p, plural, namespaced) in KINDS.items() if p == prefix and rest[:1] == [plural]
                 and (namespaced or namespace is None)]  # fmt: skip
        if not kinds or len(rest) > 3:
            return status(404, "NotFound", "the server could not find the requested resource")
        kind, plural = kinds[0], rest[0]
        verb = "list" if len(rest) == 1 else "get"
        resource = f"{plural}/log" if rest[2:] == ["log"] else plural
        if (plural, namespace) in self.forbidden or (plural, None) in self.forbidden:
            where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
            group = prefix.split("/")[1] if prefix.startswith("apis/") else ""
            name = f' "{rest[1]}"' if len(rest) > 1 else ""
            return status(403, "Forbidden", f'{plural}{name} is forbidden: User "{USER}" cannot {verb} resource '
                          f'"{resource}" in API group "{group}" {where}', kind=plural)  # fmt: skip
        if len(rest) == 1:
            return self._list(kind, namespace, request.query)
        found = self._find(kind, namespace, rest[1])
        if found is None:
            return status(404, "NotFound", f'{plural} "{rest[1]}" not found', name=rest[1], kind=plural)
        if rest[2:] == ["log"]:
            return await self._log(request, found)
        if len(rest) == 3:
            return status(404, "NotFound", "the server could not find the requested resource")
        return web.json_response(found)

    def _in(self, kind: str, namespace: str | None) -> list[dict[str, Any]]:
        return [
            o
            for o in self.objects
            if o["kind"] == kind and (namespace is None or o["metadata"].get("namespace") == namespace)
        ]

    def _find(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return next((o for o in self._in(kind, namespace) if o["metadata"]["name"] == name), None)

    def _list(self, kind: str, namespace: str | None, query: Any) -> web.Response:
        items = [
            o for o in self._in(kind, namespace)
            if label_matches(query.get("labelSelector", ""), o["metadata"].get("labels") or {})
            and field_matches(query.get("fieldSelector", ""), o)
        ]  # fmt: skip
        start = int(base64.b64decode(query["continue"]).decode()) if query.get("continue") else 0
        limit = int(query.get("limit") or 0) or len(items)
        page, rest = items[start : start + limit], items[start + limit :]
        metadata: dict[str, Any] = {"resourceVersion": "48213"}
        if rest:
            metadata |= {
                "continue": base64.b64encode(str(start + limit).encode()).decode(),
                "remainingItemCount": len(rest),
            }
        api_version = KINDS[kind][0].removeprefix("api/").removeprefix("apis/")
        listed = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in page]
        return web.json_response(
            {"kind": f"{kind}List", "apiVersion": api_version, "metadata": metadata, "items": listed}
        )

    async def _log(self, request: web.Request, pod: dict[str, Any]) -> web.StreamResponse:
        query, name, namespace = request.query, pod["metadata"]["name"], pod["metadata"]["namespace"]
        containers = [c["name"] for c in pod["spec"]["containers"]]
        container = query.get("container") or (containers[0] if len(containers) == 1 else "")
        if not container:
            return status(
                400,
                "BadRequest",
                f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]",
            )
        if container not in containers:
            return status(400, "BadRequest", f"container {container} is not valid for pod {name}")
        previous = query.get("previous") == "true"
        state = next((s for s in pod.get("status", {}).get("containerStatuses", []) if s["name"] == container), {})
        if previous and "terminated" not in state.get("lastState", {}):
            return status(400, "BadRequest", f'previous terminated container "{container}" in pod "{name}" not found')
        waiting = state.get("state", {}).get("waiting", {}).get("reason")
        if not previous and waiting in ("ContainerCreating", "PodInitializing"):
            return status(400, "BadRequest", f'container "{container}" in pod "{name}" is waiting to start: {waiting}')
        lines = self.logs.get((namespace, name, container, previous), LogLines()).lines
        if query.get("sinceSeconds"):
            lines = [(t, text) for t, text in lines if t >= self.now - timedelta(seconds=int(query["sinceSeconds"]))]
        if query.get("tailLines"):
            lines = lines[-int(query["tailLines"]) :] if int(query["tailLines"]) else []
        stamped = query.get("timestamps") == "true"
        body = "".join(
            f"{t.strftime('%Y-%m-%dT%H:%M:%S.%f')}123Z {text}\n" if stamped else f"{text}\n" for t, text in lines
        )
        data = body.encode()
        if query.get("limitBytes"):
            data = data[: int(query["limitBytes"])]
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        for start in range(0, len(data), 4096):  # chunked, as the kubelet streams it
            await response.write(data[start : start + 4096])
        await response.write_eof()
        return response
