"""A deployment's rollout history: its ReplicaSets by revision, newest first, each with what changed from the one before.

Deploy-caused incidents are the commonest kind, and the change that matters (an image, a lowered memory limit) is
shown as a diff between revisions, so the model needs no second call to spot it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from lightkube.models.core_v1 import Container, PodTemplateSpec
from lightkube.resources.apps_v1 import Deployment, ReplicaSet

from kernel import ToolFailure, ToolOutput
from opsagent_tools.kubernetes.api import KubeApiError, KubeSession
from opsagent_tools.kubernetes.objects import ago, selector_text
from opsagent_tools.names import unknown_name

REVISION = "deployment.kubernetes.io/revision"
CHANGE_CAUSE = "kubernetes.io/change-cause"
MAX_REVISIONS = 10
_TEMPLATE_NOISE = {"containers", "initContainers"}
"""Parts of a pod spec compared container by container rather than as a whole."""


async def rollout_history(kube: KubeSession, namespace: str, name: str, now: datetime) -> ToolOutput:
    """What k8s_rollout_history answers for one deployment; for people, the newest revision and what it changed."""
    deployment = await _deployment(kube, namespace, name)
    meta = deployment.metadata
    uid = meta.uid if meta is not None else None
    selector = selector_text(deployment.spec.selector)
    page = await kube.list(ReplicaSet, namespace, labels=selector)
    owned = [rs for rs in page.items if owned_by(rs, name, uid)]
    owned.sort(key=revision_of, reverse=True)
    current = (meta.annotations or {}).get(REVISION, "?") if meta is not None else "?"
    status = deployment.status
    desired = deployment.spec.replicas if deployment.spec.replicas is not None else 1
    ready = f"{(status and status.readyReplicas) or 0}/{desired} ready"
    lines = [
        f"deployment/{name} in {namespace}: revision {current}; {desired} desired, "
        f"{(status and status.updatedReplicas) or 0} up to date, {(status and status.readyReplicas) or 0} ready, "
        f"{(status and status.unavailableReplicas) or 0} unavailable"
    ]
    for condition in (status.conditions if status else None) or []:
        if condition.status != "True" or condition.reason == "ProgressDeadlineExceeded":
            lines.append(
                f"condition {condition.type}={condition.status} {condition.reason or ''}: {condition.message or ''}"
            )
    if not owned:
        lines.append(f"no ReplicaSets owned by it (selector {selector}): it may never have rolled out.")
        return ToolOutput("\n".join(lines), headline=f"{name}: revision {current} · {ready} · no ReplicaSets")
    lines.append(f"revisions, newest first ({len(owned)}):")
    for newer, older in zip(owned[:MAX_REVISIONS], [*owned[1 : MAX_REVISIONS + 1], None], strict=False):
        lines += _revision_lines(newer, older, now)
    if len(owned) > MAX_REVISIONS:
        lines.append(f"… {len(owned) - MAX_REVISIONS} older revisions not shown")
    return ToolOutput("\n".join(lines), headline=_headline(name, owned, ready, now))


def _headline(name: str, owned: list[ReplicaSet], ready: str, now: datetime) -> str:
    """ "checkout: revision 4, 42m ago · app memory limit 512Mi → 256Mi (+1 more) · 1/3 ready"."""
    newest, older = owned[0], owned[1] if len(owned) > 1 else None
    created = ago(newest.metadata.creationTimestamp if newest.metadata else None, now)
    template = newest.spec.template if newest.spec is not None else None
    before = older.spec.template if older is not None and older.spec is not None else None
    changes = template_changes(before, template) if older is not None else []
    changed = [changes[0] + (f" (+{len(changes) - 1} more)" if len(changes) > 1 else "")] if changes else []
    return " · ".join([f"{name}: revision {revision_of(newest)}, {created}", *changed, ready])


async def _deployment(kube: KubeSession, namespace: str, name: str) -> Deployment:
    try:
        return await kube.get(Deployment, name, namespace)
    except KubeApiError as exc:
        if exc.code != 404:
            raise
    names = [d.metadata.name for d in (await kube.list(Deployment, namespace)).items if d.metadata and d.metadata.name]
    unknown = unknown_name("deployment", name, names, where=f"in namespace '{namespace}'")
    raise ToolFailure(
        f"{unknown} (Rollout history is kept for deployments.)", hint="For a statefulset use k8s_describe."
    )


def owned_by(rs: ReplicaSet, name: str, uid: str | None) -> bool:
    """Whether the deployment called `name` (with `uid`, when known) owns `rs`."""
    refs = (rs.metadata.ownerReferences if rs.metadata else None) or []
    return any(ref.kind == "Deployment" and (ref.uid == uid if uid else ref.name == name) for ref in refs)


def revision_of(rs: ReplicaSet) -> int:
    """The revision a ReplicaSet stands for (its deployment.kubernetes.io/revision annotation); 0 if it has none."""
    text = ((rs.metadata.annotations if rs.metadata else None) or {}).get(REVISION, "0")
    return int(text) if text.isdigit() else 0


def _revision_lines(rs: ReplicaSet, older: ReplicaSet | None, now: datetime) -> list[str]:
    meta, status = rs.metadata, rs.status
    annotations = (meta.annotations if meta else None) or {}
    template = rs.spec.template if rs.spec is not None else None
    images = images_text(template)
    pods = f"{status.replicas if status else 0} pods, {(status and status.readyReplicas) or 0} ready"
    head = (
        f"  #{revision_of(rs)} {meta.name if meta else '?'} created {ago(meta.creationTimestamp if meta else None, now)}"
        f"; {pods}; {images}"
    )
    lines = [head]
    if cause := annotations.get(CHANGE_CAUSE):
        lines.append(f"     change-cause: {cause}")
    if older is not None:
        older_template = older.spec.template if older.spec is not None else None
        changes = template_changes(older_template, template)
        lines.append(
            f"     changed from #{revision_of(older)}: {'; '.join(changes) if changes else 'nothing in the pod template'}"
        )
    return lines


def images_text(template: PodTemplateSpec | None) -> str:
    """Each container's image: "app=registry.example.com/checkout:v3.8.0, sidecar=…"."""
    return ", ".join(f"{c.name}={c.image}" for c in _containers(template))


def _containers(template: PodTemplateSpec | None) -> list[Container]:
    return list(template.spec.containers) if template is not None and template.spec is not None else []


def template_changes(before: PodTemplateSpec | None, after: PodTemplateSpec | None) -> list[str]:
    """What differs between two pod templates: per container its image, resources, env names and command;
    for the rest of the pod spec, the names of the fields that changed. Env values are never shown."""
    old = {c.name: c for c in _containers(before)}
    new = {c.name: c for c in _containers(after)}
    changes = [f"container {name} added" for name in new if name not in old]
    changes += [f"container {name} removed" for name in old if name not in new]
    for name in [n for n in new if n in old]:
        changes += [f"{name} {change}" for change in _container_changes(old[name], new[name])]
    old_spec = _plain(before.spec if before else None)
    new_spec = _plain(after.spec if after else None)
    other = sorted(
        k for k in set(old_spec) | set(new_spec) if k not in _TEMPLATE_NOISE and old_spec.get(k) != new_spec.get(k)
    )
    if other:
        changes.append(f"pod spec fields changed: {', '.join(other)}")
    return changes


def _container_changes(old: Container, new: Container) -> list[str]:
    changes = []
    if old.image != new.image:
        changes.append(f"image {old.image} → {new.image}")
    for part in ("limits", "requests"):
        before = _plain(getattr(old.resources, part, None) if old.resources else None)
        after = _plain(getattr(new.resources, part, None) if new.resources else None)
        for resource in sorted(set(before) | set(after)):
            if before.get(resource) != after.get(resource):
                changes.append(f"{resource} {part[:-1]} {before.get(resource, 'none')} → {after.get(resource, 'none')}")
    old_env = {e.name: _plain(e) for e in old.env or []}
    new_env = {e.name: _plain(e) for e in new.env or []}
    if added := [n for n in new_env if n not in old_env]:
        changes.append(f"env added: {', '.join(added)}")
    if removed := [n for n in old_env if n not in new_env]:
        changes.append(f"env removed: {', '.join(removed)}")
    if changed := [n for n in new_env if n in old_env and new_env[n] != old_env[n]]:
        changes.append(f"env changed (values not shown): {', '.join(changed)}")
    if (old.command, old.args) != (new.command, new.args):
        changes.append("command or args changed")
    return changes


def _plain(value: Any) -> dict[str, Any]:
    """A model (or a dict) as a plain dict, for comparison; {} for None."""
    if value is None:
        return {}
    return dict(value) if isinstance(value, dict) else value.to_dict()
