"""Workloads and their pods: a deployment, statefulset or daemonset found by name, and its pods' health in a table.

A bare name is looked up as each workload kind at once; a miss names the close ones, so the model's next call is right.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from lightkube.resources.apps_v1 import DaemonSet, Deployment, StatefulSet
from lightkube.resources.core_v1 import Pod

from kernel import ToolFailure
from opsagent_tools.kubernetes.api import ROUTES, KubeApiError, KubeSession, refuse_secrets
from opsagent_tools.kubernetes.objects import (
    age,
    ago,
    container_statuses,
    last_terminations,
    pod_status,
    ready_count,
    restarts,
    selector_text,
)
from opsagent_tools.names import unknown_name

WorkloadObject = Deployment | StatefulSet | DaemonSet
WORKLOAD_KINDS: dict[str, type[WorkloadObject]] = {
    **dict.fromkeys(("deployment", "deployments", "deploy"), Deployment),
    **dict.fromkeys(("statefulset", "statefulsets", "sts"), StatefulSet),
    **dict.fromkeys(("daemonset", "daemonsets", "ds"), DaemonSet),
}
MAX_ROWS = 40
"""Pods shown per call; the summary line still counts them all."""


@dataclass(frozen=True, slots=True)
class Workload:
    """A workload found by name: its kind (deployment, …), the object, and the selector of its pods."""

    kind: str
    name: str
    namespace: str
    selector: str
    obj: WorkloadObject


def split_ref(ref: str) -> tuple[str, str]:
    """("deployment", "checkout") from "deployment/checkout", "deploy/checkout" or ("", "checkout")."""
    kind, _, name = ref.strip().rpartition("/")
    if not name:
        raise ToolFailure(f"'{ref}' names no object.", hint="Write NAME or KIND/NAME, e.g. deployment/checkout.")
    refuse_secrets(kind)
    return kind.lower(), name


async def find_workload(kube: KubeSession, namespace: str, ref: str) -> Workload:
    """The deployment, statefulset or daemonset `ref` names; a ToolFailure with close names when there is none."""
    kind, name = split_ref(ref)
    if kind and kind not in WORKLOAD_KINDS:
        raise ToolFailure(
            f"'{kind}' is not a workload kind.",
            hint="Use deployment/NAME, statefulset/NAME or daemonset/NAME, or a bare name.",
        )
    models: Sequence[type[WorkloadObject]] = [WORKLOAD_KINDS[kind]] if kind else [Deployment, StatefulSet, DaemonSet]
    found = await asyncio.gather(*(_get_or_none(kube, model, name, namespace) for model in models))
    for model, obj in zip(models, found, strict=True):
        if obj is not None:
            selector = selector_text(obj.spec.selector if obj.spec is not None else None)
            return Workload(ROUTES[model].kind, name, namespace, selector, obj)
    kinds = [ROUTES[model].kind for model in models]
    kinds_text = kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} or {kinds[-1]}"
    known = await workload_names(kube, namespace, models)
    raise ToolFailure(unknown_name(kinds_text, name, known, where=f"in namespace '{namespace}'", plural="workloads"))


async def workload_names(kube: KubeSession, namespace: str, models: Sequence[type[WorkloadObject]]) -> list[str]:
    """kind/name of every workload of these kinds in the namespace."""
    pages = await asyncio.gather(*(kube.list(model, namespace) for model in models))
    return [
        f"{ROUTES[model].kind}/{item.metadata.name}"
        for model, page in zip(models, pages, strict=True)
        for item in page.items
        if item.metadata is not None and item.metadata.name
    ]


async def _get_or_none(
    kube: KubeSession, model: type[WorkloadObject], name: str, namespace: str
) -> WorkloadObject | None:
    try:
        return await kube.get(model, name, namespace)
    except KubeApiError as exc:
        if exc.code == 404:
            return None
        raise


def workload_summary(workload: Workload) -> str:
    """One line: the workload's replica counts as kubectl's columns show them, and its selector."""
    obj, head = workload.obj, f"{workload.kind}/{workload.name} in {workload.namespace}"
    match obj:
        case Deployment():
            s = obj.status
            counts = (
                f"{obj.spec.replicas if obj.spec.replicas is not None else 1} desired, "
                f"{(s and s.readyReplicas) or 0} ready, {(s and s.updatedReplicas) or 0} up to date, "
                f"{(s and s.availableReplicas) or 0} available"
            )
        case StatefulSet():
            s = obj.status
            counts = f"{obj.spec.replicas if obj.spec.replicas is not None else 1} desired, {(s and s.readyReplicas) or 0} ready"
            if s is not None and s.updateRevision and s.currentRevision != s.updateRevision:
                counts += f", updating {s.currentRevision} → {s.updateRevision}"
        case DaemonSet():
            d = obj.status
            counts = (
                f"{d.desiredNumberScheduled} desired, {d.numberReady} ready, {d.updatedNumberScheduled or 0} up to date"
                if d is not None
                else "no status yet"
            )
    return f"{head}: {counts}; selector {workload.selector or '(none)'}"


def pods_table(pods: Sequence[Pod], now: datetime, *, more: bool = False) -> list[str]:
    """A summary line (statuses, restarts, termination reasons), then one aligned row per pod, problems first."""
    if not pods:
        return ["no pods match."]
    statuses = Counter(pod_status(pod) for pod in pods)
    reasons = termination_reasons(pods, now)
    summary = f"{len(pods)}{'+' if more else ''} pods: " + ", ".join(f"{n} {s}" for s, n in statuses.most_common())
    summary += f"; {sum(restarts(pod) for pod in pods)} restarts"
    if reasons:
        summary += "; last terminations: " + ", ".join(f"{reason} ×{n}" for reason, n in reasons.most_common())
    ordered = sorted(pods, key=lambda pod: (_healthy(pod), pod.metadata.name if pod.metadata else ""))
    rows = [["NAME", "STATUS", "READY", "RESTARTS", "AGE", "NODE", "LAST TERMINATION"]]
    rows += [_row(pod, now) for pod in ordered[:MAX_ROWS]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = [summary] + [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1] for row in rows
    ]
    if len(pods) > MAX_ROWS or more:
        lines.append(
            f"… {len(pods) - MAX_ROWS if len(pods) > MAX_ROWS else 'more'} pods not shown: narrow with a selector"
        )
    return [line.rstrip() for line in lines]


def pods_headline(subject: str, pods: Sequence[Pod], now: datetime, *, more: bool = False) -> str:
    """ "checkout: 1/3 ready · 2 CrashLoopBackOff (OOMKilled, 13 restarts)": ready pods of all, the others by status,
    the commonest last termination and the restarts."""
    if not pods:
        return f"{subject}: no pods"
    unhealthy = Counter(pod_status(pod) for pod in pods if not _healthy(pod))
    parts = [f"{subject}: {sum(1 for pod in pods if _healthy(pod))}/{len(pods)}{'+' if more else ''} ready"]
    parts += [", ".join(f"{n} {status}" for status, n in unhealthy.most_common(3))] if unhealthy else []
    reasons = termination_reasons(pods, now)
    count = sum(restarts(pod) for pod in pods)
    why = [reasons.most_common(1)[0][0]] if reasons else []
    detail = ", ".join([*why, f"{count} restart{'' if count == 1 else 's'}"])
    return " · ".join(parts) + (f" ({detail})" if len(unhealthy) == 1 else f" · {detail}")


def termination_reasons(pods: Sequence[Pod], now: datetime) -> Counter[str]:
    """How the containers' previous runs ended, counted: OOMKilled, Error, Completed."""
    return Counter(line.split(": ", 1)[1].split(" (", 1)[0] for pod in pods for line in last_terminations(pod, now))


def _healthy(pod: Pod) -> bool:
    ready = ready_count(pod).split("/")
    return pod_status(pod) in ("Running", "Succeeded", "Completed") and ready[0] == ready[1]


def _row(pod: Pod, now: datetime) -> list[str]:
    meta, spec = pod.metadata, pod.spec
    count = restarts(pod)
    last = [
        s.lastState.terminated.finishedAt for s in container_statuses(pod) if s.lastState and s.lastState.terminated
    ]
    latest = max((when for when in last if when is not None), default=None)
    restart_text = f"{count} ({ago(latest, now)})" if count and latest else str(count)
    return [
        meta.name or "?" if meta else "?",
        pod_status(pod),
        ready_count(pod),
        restart_text,
        age(meta.creationTimestamp if meta else None, now),
        (spec.nodeName if spec else None) or "-",
        "; ".join(last_terminations(pod, now)) or "-",
    ]
