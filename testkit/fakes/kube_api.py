"""A fake Kubernetes API server on 127.0.0.1 for the Kubernetes tools: the product's REST core (the demo's cluster
API, `opsagent_tools.demo_cluster.ClusterApi`: List objects, `Status` errors, logs, metrics.k8s.io, selectors) plus
what a real cluster does to a client that the demo never needs: a bearer token, RBAC refusals (403 with reason and
details), a metrics-server that is down, delays, and broken or hostile bodies from a proxy in front of it. Every
request is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from opsagent_tools.demo_cluster import METRICS_PREFIX, ClusterApi, LogKey, LogLines, resolve, status
from testkit.servers.local_server import LocalServer

__all__ = ["TOKEN", "FakeKubeApi", "LogLines"]

TOKEN = "test-service-account-token"
USER = "system:serviceaccount:opsagent:opsagent"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    authorization: str


class FakeKubeApi(LocalServer, ClusterApi):
    """Objects by kind, container logs by (namespace, pod, container, previous), RBAC refusals and delays on demand."""

    shutdown_timeout = 0.5

    def __init__(
        self,
        objects: list[dict[str, Any]],
        *,
        now: datetime,
        logs: dict[LogKey, LogLines] | None = None,
        metrics: bool = True,
    ) -> None:
        LocalServer.__init__(self)
        ClusterApi.__init__(self, objects, now=now, logs=logs, metrics=metrics)
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
        resource = resolve(request.path)
        if request.method != "GET" or resource is None:
            return await self.answer(request)
        if (resource.plural, resource.namespace) in self.forbidden or (resource.plural, None) in self.forbidden:
            where = f'in the namespace "{resource.namespace}"' if resource.namespace else "at the cluster scope"
            name = f' "{resource.name}"' if resource.name else ""
            kind = f"{resource.plural}/log" if resource.log else resource.plural
            return status(403, "Forbidden", f'{resource.plural}{name} is forbidden: User "{USER}" cannot '
                          f'{resource.verb} resource "{kind}" in API group "{resource.group}" {where}',
                          kind=resource.plural)  # fmt: skip
        if resource.prefix == METRICS_PREFIX and self.metrics and self.metrics_status:
            return status(
                self.metrics_status, "ServiceUnavailable", "the server is currently unable to handle the request"
            )
        return await self.respond(request, resource)
