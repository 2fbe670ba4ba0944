"""Kubernetes rollouts as changes: each ReplicaSet revision of a service's deployments made in the window, diffed.

The client, the ownership test and the pod-template diff are the rollout-history tool's own, so both say the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import cast

from lightkube.resources.apps_v1 import Deployment, ReplicaSet

from kernel import ToolFailure
from opsagent_tools.changes import (
    Change,
    ChangeQuery,
    ChangeSource,
    ChangesSettings,
    SourceKind,
    SourceResult,
    one_line,
)
from opsagent_tools.kubernetes.api import KubeApi, KubeApiError, KubeSession, Page
from opsagent_tools.kubernetes.objects import ago
from opsagent_tools.kubernetes.rollouts import (
    CHANGE_CAUSE,
    images_text,
    owned_by,
    revision_of,
    template_changes,
)


def change_sources(settings: ChangesSettings, api: KubeApi) -> list[ChangeSource]:
    """What the cluster adds to the timeline: its deployments' rollouts, unless `settings` turn them off."""
    return [RolloutChanges(api, settings.deployment_labels)] if settings.kubernetes else []


class RolloutChanges:
    """The rollouts of deployments in every allowed namespace; one namespace refused is one line, not a failure."""

    name = "kubernetes"
    what = "Kubernetes rollouts (ReplicaSet revisions, with what each changed)"
    kind = SourceKind.KUBERNETES

    def __init__(self, api: KubeApi, labels: Sequence[str]) -> None:
        self.api, self.labels = api, tuple(labels)

    def about(self, service: str | None) -> bool:
        return True  # deployments are matched by name and labels when read

    async def check(self, end: datetime) -> str:
        return self.name

    async def read(self, query: ChangeQuery) -> SourceResult:
        namespaces = self.api.namespaces("")
        async with self.api.session() as kube:
            answers = await asyncio.gather(
                *(self._namespace(kube, ns, query) for ns in namespaces), return_exceptions=True
            )
        changes: list[Change] = []
        refused: list[str] = []
        notes: list[str] = []
        matched = 0
        for namespace, answer in zip(namespaces, answers, strict=True):
            if isinstance(answer, KubeApiError):
                refused.append(_refusal(namespace, answer))
            elif isinstance(answer, BaseException):
                raise answer
            else:
                count, found, more = answer
                matched, changes, notes = matched + count, changes + found, notes + more
        if refused and len(refused) == len(namespaces):
            raise ToolFailure("; ".join(refused))
        which = f" matching {query.service}" if query.service else ""
        where = ", ".join(ns or "every namespace" for ns in namespaces)
        covered = f"{matched} deployment{'' if matched == 1 else 's'}{which} in {where}"
        return SourceResult(self.name, covered, changes, refused + notes)

    async def _namespace(
        self, kube: KubeSession, namespace: str | None, query: ChangeQuery
    ) -> tuple[int, list[Change], list[str]]:
        lists = await asyncio.gather(
            kube.list(Deployment, namespace), kube.list(ReplicaSet, namespace), return_exceptions=True
        )  # both at once, and both finished before either's failure is raised
        for failed in (answer for answer in lists if isinstance(answer, BaseException)):
            raise failed
        deployments, replicasets = cast(tuple[Page[Deployment], Page[ReplicaSet]], tuple(lists))
        matching = [d for d in deployments.items if self._matches(d, query.service)]
        changes = [change for d in matching for change in _rollouts(d, replicasets, query)]
        where = namespace or "the cluster"
        notes = [f"more ReplicaSets in {where} than tools.kubernetes.list_limit: some rollouts may be missing"]
        return len(matching), changes, notes if replicasets.more else []

    def _matches(self, deployment: Deployment, service: str | None) -> bool:
        meta = deployment.metadata
        if meta is None or not meta.name:
            return False
        labels = meta.labels or {}
        return service is None or meta.name == service or any(labels.get(key) == service for key in self.labels)


def _rollouts(deployment: Deployment, replicasets: Page[ReplicaSet], query: ChangeQuery) -> list[Change]:
    """A change per revision rolled out in the window: a new ReplicaSet, or an older one brought back (a rollback)."""
    meta = deployment.metadata
    name, uid = (meta.name or "", meta.uid) if meta is not None else ("", None)  # matched deployments have a name
    owned = sorted((rs for rs in replicasets.items if owned_by(rs, name, uid)), key=revision_of, reverse=True)
    changes = []
    for index, newer in enumerate(owned):
        older = owned[index + 1] if index + 1 < len(owned) else None
        created = _created(newer)
        rollback = older is not None and created is not None and (_created(older) or created) > created
        rolled = _progressed(deployment, newer) if rollback else created
        if rolled is None or not query.since <= rolled <= query.until:
            continue
        template = newer.spec.template if newer.spec is not None else None
        rs_name = newer.metadata.name if newer.metadata is not None else "?"
        if older is None:
            what = f"first revision: {images_text(template)}"
        else:
            diff = template_changes(older.spec.template if older.spec is not None else None, template)
            what = "; ".join(diff) or "nothing changed in the pod template"
        verb = (
            f"rolled back to revision {revision_of(newer)} ({rs_name}, first made {ago(created, query.until)})"
            if rollback
            else f"revision {revision_of(newer)} ({rs_name}) rolled out"
        )
        cause = ((newer.metadata.annotations if newer.metadata else None) or {}).get(CHANGE_CAUSE)
        text = f"deployment/{name} in {meta.namespace if meta else '?'}: {verb}: {what}"
        changes.append(Change(rolled, SourceKind.KUBERNETES, text + (f" · change-cause: {cause}" if cause else "")))
    return changes


def _created(rs: ReplicaSet) -> datetime | None:
    return rs.metadata.creationTimestamp if rs.metadata is not None else None


def _progressed(deployment: Deployment, rs: ReplicaSet) -> datetime | None:
    """When a rollback to `rs` happened: its ReplicaSet was made long ago, so the time is the one the deployment's
    Progressing condition gives when it names that ReplicaSet (None when it does not: the time is unknown)."""
    name = rs.metadata.name if rs.metadata is not None else None
    conditions = (deployment.status.conditions if deployment.status is not None else None) or []
    for condition in conditions:
        if condition.type == "Progressing" and name and f'"{name}"' in (condition.message or ""):
            return condition.lastUpdateTime
    return None


def _refusal(namespace: str | None, error: KubeApiError) -> str:
    where = f"namespace {namespace}" if namespace else "the cluster"
    if error.code == 403:
        return (
            f"403 on {where}: OpsAgent may not list deployments or replicasets there; bind the read-only "
            "ClusterRole (deploy/k8s/clusterrole.yaml) in it"
        )
    return f"{where}: {one_line(str(error), 240)}"
