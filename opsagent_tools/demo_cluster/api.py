"""A Kubernetes API that serves a fixed set of objects in the REST API's documented shapes: the demo's cluster, and
the core of the tests' fake (testkit/fakes/kube_api.py), which adds refusals, delays and broken bodies to it.

List objects (`kind: PodList`, `metadata.resourceVersion`, `continue` under `limit`), `Status` errors (404, 400
from the kubelet, 405), GETs under /api/v1 and /apis/<group>/<version>, container logs streamed as plain text
(previous, container, tailLines, sinceSeconds, timestamps, limitBytes), metrics.k8s.io (or a 404 when metrics-server
is absent), label and field selectors. Watches, writes and discovery are not served.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from aiohttp import web

from opsagent_tools.demo_cluster.selectors import field_matches, label_matches

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
RESOURCE_VERSION = "48213"
LOG_CHUNK = 4096
"""Bytes per write of a container log: streamed in chunks, as the kubelet sends it."""


@dataclass
class LogLines:
    """One container run's log: (time, text) lines, oldest first."""

    lines: list[tuple[datetime, str]] = field(default_factory=list)


LogKey = tuple[str, str, str, bool]
"""(namespace, pod, container, previous): which run of which container a log is."""


@dataclass(frozen=True)
class Resource:
    """What a request path names: a kind's collection (`name` None) or one object, or one pod's log."""

    prefix: str
    kind: str
    plural: str
    namespace: str | None
    name: str | None
    log: bool

    @property
    def verb(self) -> str:
        """`list` or `get`, as RBAC names what the request does."""
        return "get" if self.name is not None else "list"

    @property
    def group(self) -> str:
        """The API group ("" for the core group), as RBAC names it."""
        return self.prefix.split("/")[1] if self.prefix.startswith("apis/") else ""


def status(code: int, reason: str, message: str, **details: Any) -> web.Response:
    """A `Status` object, exactly as the API server sends one with an error code."""
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": details,
        "code": code,
    }
    return web.json_response(body, status=code)


def not_found() -> web.Response:
    return status(404, "NotFound", "the server could not find the requested resource")


class _BadRequest(Exception):
    """A query parameter the API server would refuse; its message is the Status message."""


class ClusterApi:
    """Objects (as the API returns them, `kind` and `apiVersion` included), container logs by `LogKey`, and
    metrics.k8s.io when `metrics`; `now` is the cluster's clock (for `sinceSeconds`)."""

    def __init__(
        self,
        objects: list[dict[str, Any]],
        *,
        now: datetime,
        logs: Mapping[LogKey, LogLines] | None = None,
        metrics: bool = True,
    ) -> None:
        self.objects, self.now, self.logs, self.metrics = objects, now, dict(logs or {}), metrics

    async def answer(self, request: web.Request) -> web.StreamResponse:
        """The API server's answer to an authenticated request."""
        if request.method != "GET":
            return status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        resource = resolve(request.path)
        return not_found() if resource is None else await self.respond(request, resource)

    async def respond(self, request: web.Request, resource: Resource) -> web.StreamResponse:
        """The answer for `resource`: a List, one object, or a container log."""
        if resource.prefix == METRICS_PREFIX and not self.metrics:
            return not_found()
        try:
            if resource.name is None:
                return self._list(resource, request.query)
            found = self._find(resource.kind, resource.namespace, resource.name)
            if found is None:
                return status(
                    404,
                    "NotFound",
                    f'{resource.plural} "{resource.name}" not found',
                    name=resource.name,
                    kind=resource.plural,
                )
            if resource.log:
                return await self._log(request, found)
            return web.json_response(found)
        except _BadRequest as exc:
            return status(400, "BadRequest", str(exc))

    def _in(self, kind: str, namespace: str | None) -> list[dict[str, Any]]:
        return [
            o
            for o in self.objects
            if o["kind"] == kind and (namespace is None or o["metadata"].get("namespace") == namespace)
        ]

    def _find(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return next((o for o in self._in(kind, namespace) if o["metadata"]["name"] == name), None)

    def _list(self, resource: Resource, query: Mapping[str, str]) -> web.Response:
        items = [
            o
            for o in self._in(resource.kind, resource.namespace)
            if label_matches(query.get("labelSelector", ""), o["metadata"].get("labels") or {})
            and field_matches(query.get("fieldSelector", ""), o)
        ]
        start = _continued(query.get("continue", ""))
        limit = _number(query, "limit") or len(items)
        page, rest = items[start : start + limit], items[start + limit :]
        metadata: dict[str, Any] = {"resourceVersion": RESOURCE_VERSION}
        if rest:
            metadata |= {
                "continue": base64.b64encode(str(start + limit).encode()).decode(),
                "remainingItemCount": len(rest),
            }
        api_version = resource.prefix.removeprefix("api/").removeprefix("apis/")
        listed = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in page]
        return web.json_response(
            {"kind": f"{resource.kind}List", "apiVersion": api_version, "metadata": metadata, "items": listed}
        )

    async def _log(self, request: web.Request, pod: dict[str, Any]) -> web.StreamResponse:
        query, name, namespace = request.query, pod["metadata"]["name"], pod["metadata"]["namespace"]
        containers = [c["name"] for c in pod["spec"]["containers"]]
        container = query.get("container") or (containers[0] if len(containers) == 1 else "")
        if not container:
            raise _BadRequest(
                f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
            )
        if container not in containers:
            raise _BadRequest(f"container {container} is not valid for pod {name}")
        previous = query.get("previous") == "true"
        state = next((s for s in pod.get("status", {}).get("containerStatuses", []) if s["name"] == container), {})
        if previous and "terminated" not in state.get("lastState", {}):
            raise _BadRequest(f'previous terminated container "{container}" in pod "{name}" not found')
        waiting = state.get("state", {}).get("waiting", {}).get("reason")
        if not previous and waiting in ("ContainerCreating", "PodInitializing"):
            raise _BadRequest(f'container "{container}" in pod "{name}" is waiting to start: {waiting}')
        lines = self.logs.get((namespace, name, container, previous), LogLines()).lines
        if (since := _number(query, "sinceSeconds")) is not None:
            lines = [(t, text) for t, text in lines if t >= self.now - timedelta(seconds=since)]
        if (tail := _number(query, "tailLines")) is not None:
            lines = lines[-tail:] if tail else []
        stamped = query.get("timestamps") == "true"
        data = "".join(
            f"{t.strftime('%Y-%m-%dT%H:%M:%S.%f')}123Z {text}\n" if stamped else f"{text}\n" for t, text in lines
        ).encode()
        if (limit := _number(query, "limitBytes")) is not None:
            data = data[:limit]
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        for start in range(0, len(data), LOG_CHUNK):
            await response.write(data[start : start + LOG_CHUNK])
        await response.write_eof()
        return response


def resolve(path: str) -> Resource | None:
    """The resource a request path names, or None when the API serves nothing there (a 404)."""
    parts = path.strip("/").split("/")
    prefix_len = 2 if parts[0] == "api" else 3
    prefix, rest = "/".join(parts[:prefix_len]), parts[prefix_len:]
    namespace = None
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    kinds = [
        kind
        for kind, (p, plural, namespaced) in KINDS.items()
        if p == prefix and rest[:1] == [plural] and (namespaced or namespace is None)
    ]
    if not kinds or len(rest) > 3 or (len(rest) == 3 and rest[2] != "log"):
        return None
    return Resource(prefix, kinds[0], rest[0], namespace, rest[1] if len(rest) > 1 else None, len(rest) == 3)


def _number(query: Mapping[str, str], name: str) -> int | None:
    """A non-negative integer parameter, None when absent; anything else is refused as the API server does."""
    text = query.get(name)
    if text is None or text == "":
        return None
    if not (text.isascii() and text.isdigit()):
        raise _BadRequest(f'invalid value for {name}: "{text[:40]}" is not a non-negative integer')
    return int(text)


def _continued(token: str) -> int:
    """Where a `continue` token resumes a list (the token is the offset, base64-encoded)."""
    if not token:
        return 0
    try:
        return int(base64.b64decode(token, validate=True).decode())
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise _BadRequest("the provided continue parameter is not valid: list again from the start") from None
