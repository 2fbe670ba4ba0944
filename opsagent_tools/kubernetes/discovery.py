"""What `discover` lists from Kubernetes: the namespaces the tools may read (each with its workload count) and the
workloads in them (deployments, statefulsets, daemonsets, with ready replicas), within the namespace allowlist.

Names, not guesses: the model then names `deployment/checkout` in `shop` to k8s_pods and k8s_describe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from lightkube.resources.apps_v1 import DaemonSet, Deployment, StatefulSet
from lightkube.resources.core_v1 import Namespace

from kernel import ToolFailure
from opsagent_tools.discovery import Kind
from opsagent_tools.kubernetes.api import ROUTES, KubeApi, KubeApiError, KubeSession
from opsagent_tools.kubernetes.workloads import WorkloadObject
from opsagent_tools.names import capped, unknown_name

WORKLOAD_MODELS: tuple[type[WorkloadObject], ...] = (Deployment, StatefulSet, DaemonSet)
COUNTED = 20
"""Namespaces whose workloads are counted in a namespace listing (three list requests each)."""
NAMESPACES_SCANNED = 10
"""Namespaces whose workloads one workload listing reads; narrow with a namespace beyond it."""
WORKLOADS_SHOWN = 60
"""Workloads shown per namespace."""
KINDS = (
    Kind(
        "kubernetes_namespaces",
        "the Kubernetes namespaces the tools may read, each with how many workloads it runs",
        "part of a namespace name; none: every namespace the tools may read",
    ),
    Kind(
        "kubernetes_workloads",
        "Kubernetes deployments, statefulsets and daemonsets with their ready replicas: the names k8s_pods takes",
        "a namespace; none: every namespace the tools may read",
    ),
)


class KubernetesDiscovery:
    """The `discover` source over the cluster `[tools.kubernetes]` names, never outside its allowlist."""

    kinds: Sequence[Kind] = KINDS

    def __init__(self, api: KubeApi) -> None:
        self._api = api

    async def discover(self, kind: str, filter: str | None) -> str:
        """The listing of one of `KINDS`."""
        match kind:
            case "kubernetes_namespaces":
                return await self._namespaces(filter)
            case "kubernetes_workloads":
                return await self._workloads(filter)
        raise ToolFailure(f"Kubernetes lists no kind {kind!r}")

    async def _namespaces(self, part: str | None) -> str:
        async with self._api.session() as session:
            readable = await self._readable(session)
            names = [name for name in readable if part is None or part.lower() in name]
            if not names:
                return unknown_name("namespace", part or "", readable, where="is readable by the tools")
            counts = await asyncio.gather(*(self._count(session, name) for name in names[:COUNTED]))
        listed = [f"{name} ({count})" for name, count in zip(names, counts, strict=False)] + names[COUNTED:]
        scope = "every namespace (all_namespaces = true)" if self._api.settings.all_namespaces else "the allowlist"
        return (
            f"Namespaces the tools may read, from {scope} ({len(names)}): {capped(listed)}\n"
            'discover(kind="kubernetes_workloads", filter="<namespace>") lists one namespace\'s workloads.'
        )

    async def _workloads(self, namespace: str | None) -> str:
        async with self._api.session() as session:
            scope = [self._api.check_namespace(namespace)] if namespace else await self._readable(session)
            scanned = scope[:NAMESPACES_SCANNED]
            found = await asyncio.gather(*(self._listing(session, name) for name in scanned))
        lines = [f"Workloads in {len(scanned)} namespace{'s' if len(scanned) != 1 else ''} (ready/desired):"]
        for name, listing in zip(scanned, found, strict=True):
            lines += [f"{name}:", *listing]
        if len(scope) > len(scanned):
            rest = capped(scope[len(scanned) :])
            lines.append(f"and {len(scope) - len(scanned)} more namespaces not read: {rest}; name one as the filter")
        return "\n".join(lines)

    async def _readable(self, session: KubeSession) -> list[str]:
        """The namespaces the tools may read: the allowlist, or every namespace the cluster has."""
        if not self._api.settings.all_namespaces:
            return list(self._api.settings.namespaces)
        page = await session.list(Namespace)
        return sorted(item.metadata.name for item in page.items if item.metadata is not None and item.metadata.name)

    async def _count(self, session: KubeSession, namespace: str) -> str:
        try:
            pages = await asyncio.gather(*(session.list(model, namespace) for model in WORKLOAD_MODELS))
        except KubeApiError as exc:
            return f"not readable: HTTP {exc.code}" if exc.code else "not readable"
        count = sum(len(page.items) for page in pages)
        return f"{count}{'+' if any(page.more for page in pages) else ''} workload{'s' if count != 1 else ''}"

    async def _listing(self, session: KubeSession, namespace: str) -> list[str]:
        try:
            pages = await asyncio.gather(*(session.list(model, namespace) for model in WORKLOAD_MODELS))
        except KubeApiError as exc:
            return [f"  not readable: {str(exc).split('. ')[0]}."]
        rows = [
            f"  {ROUTES[model].kind}/{item.metadata.name}: {_ready(item)}"
            for model, page in zip(WORKLOAD_MODELS, pages, strict=True)
            for item in page.items
            if item.metadata is not None and item.metadata.name
        ]
        if not rows:
            return ["  no deployments, statefulsets or daemonsets"]
        more = len(rows) - WORKLOADS_SHOWN
        return rows[:WORKLOADS_SHOWN] + ([f"  … and {more} more"] if more > 0 else [])


def _ready(item: WorkloadObject) -> str:
    match item:
        case DaemonSet():
            status = item.status
            return f"{status.numberReady}/{status.desiredNumberScheduled} ready" if status is not None else "no status"
        case Deployment() | StatefulSet():
            desired = item.spec.replicas if item.spec is not None and item.spec.replicas is not None else 1
            ready = (item.status.readyReplicas if item.status is not None else None) or 0
            return f"{ready}/{desired} ready"
