"""`kubectl describe`, compact: a pod, deployment or node with its containers, conditions and recent events.

Environment values that come from Secrets are printed as references (`<secret db key password>`), never fetched;
literal values and commands are masked by position where a credential sits (see `containers`), then pass through
the dispatcher's redaction like every other observation.
"""

from __future__ import annotations

from datetime import datetime
from typing import assert_never

from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import Node, Pod

from kernel import Redactor, ToolFailure, ToolOutput
from opsagent_tools.kubernetes.api import KubeApi, KubeApiError, KubeSession, refuse_secrets
from opsagent_tools.kubernetes.containers import container_lines, pod_spec_containers, volume_lines
from opsagent_tools.kubernetes.events import (
    NODE_EVENTS_NAMESPACE,
    ObjectFilter,
    fetch_events,
    group_events,
    group_lines,
)
from opsagent_tools.kubernetes.objects import (
    age,
    ago,
    pod_status,
    ready_count,
    restarts,
    selector_text,
)
from opsagent_tools.kubernetes.rollouts import REVISION
from opsagent_tools.kubernetes.workloads import termination_reasons
from opsagent_tools.names import unknown_name

DESCRIBE_KINDS = {
    **dict.fromkeys(("pod", "pods", "po"), Pod),
    **dict.fromkeys(("deployment", "deployments", "deploy"), Deployment),
    **dict.fromkeys(("node", "nodes", "no"), Node),
}
EVENT_GROUPS = 12
"""Event groups shown under an object; k8s_events shows more."""


async def describe_output(
    api: KubeApi, kind: str, name: str, namespace: str, now: datetime, redactor: Redactor
) -> ToolOutput:
    """What k8s_describe answers: the object described, and its state in one line; `redactor` (dispatch's) reads
    text that is cut here (commands, termination messages) before it is cut."""
    refuse_secrets(kind)
    model = DESCRIBE_KINDS.get(kind.strip().lower())
    if model is None:
        raise ToolFailure(
            f"k8s_describe reads a pod, deployment or node, not '{kind}'.", hint="For workload pods use k8s_pods."
        )
    async with api.session() as kube:
        if model is Node:
            obj = await _get(kube, Node, name, None)
            event_namespace = NODE_EVENTS_NAMESPACE
        else:
            api.check_namespace(namespace)
            obj = await _get(kube, model, name, namespace)
            event_namespace = namespace
        lines = await _event_lines(api, kube, model, name, event_namespace, now, redactor)
    match obj:
        case Pod():
            lines = pod_lines(obj, now, redactor) + lines
        case Deployment():
            lines = deployment_lines(obj, now, redactor) + lines
        case Node():
            lines = node_lines(obj, now) + lines
        case _:
            assert_never(obj)
    return ToolOutput("\n".join(lines), headline=describe_headline(obj, now))


def describe_headline(obj: Pod | Deployment | Node, now: datetime) -> str:
    """ "pod checkout-x: CrashLoopBackOff · 0/1 ready · 7 restarts · last OOMKilled", "deployment checkout: revision 4
    · 1/3 ready · Available=False", "node node-a: Ready · MemoryPressure"."""
    name = (obj.metadata.name if obj.metadata else None) or "?"
    match obj:
        case Pod():
            reasons = termination_reasons([obj], now)
            last = [f"last {reasons.most_common(1)[0][0]}"] if reasons else []
            parts = [f"pod {name}: {pod_status(obj)}", f"{ready_count(obj)} ready", f"{restarts(obj)} restarts", *last]
        case Deployment():
            status, annotations = obj.status, (obj.metadata.annotations if obj.metadata else None) or {}
            desired = obj.spec.replicas if obj.spec.replicas is not None else 1
            failing = [
                f"{c.type}={c.status}" for c in (status.conditions if status else None) or [] if c.status != "True"
            ]
            parts = [f"deployment {name}: revision {annotations.get(REVISION, '?')}"]
            parts += [f"{(status and status.readyReplicas) or 0}/{desired} ready", *failing]
            parts += ["PAUSED"] if obj.spec.paused else []
        case Node():
            conditions = (obj.status.conditions if obj.status else None) or []
            ready = any(c.type == "Ready" and c.status == "True" for c in conditions)
            pressure = [c.type for c in conditions if c.type != "Ready" and c.status == "True"]
            cordoned = ["SchedulingDisabled"] if obj.spec and obj.spec.unschedulable else []
            parts = [f"node {name}: {'Ready' if ready else 'NotReady'}", *pressure, *cordoned]
        case _:
            assert_never(obj)
    return " · ".join(parts)


async def _get(
    kube: KubeSession, model: type[Pod | Deployment | Node], name: str, namespace: str | None
) -> Pod | Deployment | Node:
    try:
        return await kube.get(model, name, namespace)
    except KubeApiError as exc:
        if exc.code != 404:
            raise
    kind = model.__name__.lower()
    names = [i.metadata.name for i in (await kube.list(model, namespace)).items if i.metadata and i.metadata.name]
    where = f"in namespace '{namespace}'" if namespace else "in the cluster"
    raise ToolFailure(unknown_name(kind, name, names, where=where))


async def _event_lines(
    api: KubeApi,
    kube: KubeSession,
    model: type[Pod | Deployment | Node],
    name: str,
    namespace: str,
    now: datetime,
    redactor: Redactor,
) -> list[str]:
    if not api.settings.allows(namespace):
        return [f"events: not read (node events are kept in namespace '{namespace}', which is not allowed)"]
    wanted = ObjectFilter(kind=model.__name__, name=name)
    events, _, failures = await fetch_events(kube, [namespace], wanted)
    groups = group_events(events, wanted, redactor=redactor)
    if not groups:
        return ["events: none (they expire an hour after they last happen)", *[f"note: {f}" for f in failures]]
    return [f"events ({sum(g.count for g in groups)}):", *group_lines(groups[:EVENT_GROUPS], now)]


def pod_lines(pod: Pod, now: datetime, redactor: Redactor) -> list[str]:
    """A pod's header, placement, failing conditions, then each container with its state and configuration."""
    meta, spec, status = pod.metadata, pod.spec, pod.status
    lines = [
        f"pod {meta.name if meta else '?'} in {meta.namespace if meta else '?'}: {pod_status(pod)}, "
        f"{ready_count(pod)} ready, {restarts(pod)} restarts, age {age(meta.creationTimestamp if meta else None, now)}"
    ]
    owners = ", ".join(f"{r.kind.lower()}/{r.name}" for r in (meta.ownerReferences if meta else None) or [])
    facts = [
        f"node {(spec.nodeName if spec else None) or '(not scheduled)'}",
        f"IP {(status.podIP if status else None) or '-'}",
        f"QoS {(status.qosClass if status else None) or '-'}",
    ]
    facts += [f"controlled by {owners}"] if owners else []
    facts += [f"service account {spec.serviceAccountName}"] if spec and spec.serviceAccountName else []
    lines.append(" · ".join(facts))
    failing = [c for c in (status.conditions if status else None) or [] if c.status != "True"]
    if failing:
        lines.append(
            "conditions not true: "
            + "; ".join(
                f"{c.type}={c.status} ({c.reason or '-'}: {c.message or ''})".replace(": )", ")") for c in failing
            )
        )
    statuses = {
        (label, s.name): s
        for label, found in (
            ("container", status.containerStatuses if status else None),
            ("init container", status.initContainerStatuses if status else None),
            ("ephemeral container", status.ephemeralContainerStatuses if status else None),
        )
        for s in found or []
    }
    if spec is not None:
        for label, container in pod_spec_containers(spec):
            lines += container_lines(container, statuses.get((label, container.name)), now, redactor, label=label)
        lines += volume_lines(spec)
    return lines


def deployment_lines(deployment: Deployment, now: datetime, redactor: Redactor) -> list[str]:
    """A deployment's replica counts, strategy, conditions and pod template."""
    meta, spec, status = deployment.metadata, deployment.spec, deployment.status
    revision = ((meta.annotations if meta else None) or {}).get(REVISION, "?")
    strategy = spec.strategy
    rolling = strategy.rollingUpdate if strategy else None
    strategy_text = (strategy.type if strategy else None) or "RollingUpdate"
    if rolling is not None:
        strategy_text += f" (max surge {rolling.maxSurge or '25%'}, max unavailable {rolling.maxUnavailable or '25%'})"
    lines = [
        f"deployment {meta.name if meta else '?'} in {meta.namespace if meta else '?'}: revision {revision}; "
        f"{spec.replicas if spec.replicas is not None else 1} desired, {(status and status.readyReplicas) or 0} ready, "
        f"{(status and status.updatedReplicas) or 0} up to date, {(status and status.availableReplicas) or 0} available"
        + ("; PAUSED" if spec.paused else ""),
        f"selector {selector_text(spec.selector)} · strategy {strategy_text} · "
        f"age {age(meta.creationTimestamp if meta else None, now)} · revisions: k8s_rollout_history",
    ]
    for condition in (status.conditions if status else None) or []:
        lines.append(
            f"condition {condition.type}={condition.status} {condition.reason or ''}: {condition.message or ''}"
            f" (updated {ago(condition.lastUpdateTime, now)})"
        )
    template_spec = spec.template.spec
    if template_spec is not None:
        lines.append("pod template:")
        for label, container in pod_spec_containers(template_spec):
            lines += container_lines(container, None, now, redactor, label=label)
        lines += volume_lines(template_spec)
    return lines


def node_lines(node: Node, now: datetime) -> list[str]:
    """A node's readiness, pressure conditions, capacity, taints."""
    meta, spec, status = node.metadata, node.spec, node.status
    conditions = (status.conditions if status else None) or []
    ready = next((c for c in conditions if c.type == "Ready"), None)
    labels = (meta.labels if meta else None) or {}
    roles = [key.split("/", 1)[1] for key in labels if key.startswith("node-role.kubernetes.io/")] or ["<none>"]
    info = status.nodeInfo if status else None
    head = f"node {meta.name if meta else '?'}: {'Ready' if ready and ready.status == 'True' else 'NotReady'}"
    head += ", SchedulingDisabled" if spec and spec.unschedulable else ""
    head += f"; roles {','.join(roles)}; kubelet {info.kubeletVersion if info else '?'}; age {age(meta.creationTimestamp if meta else None, now)}"
    lines = [head]
    for condition in conditions:
        if (condition.type == "Ready") != (condition.status == "True") or condition.type == "Ready":
            lines.append(
                f"condition {condition.type}={condition.status} {condition.reason or ''}: {condition.message or ''}"
            )
    capacity = (status.capacity if status else None) or {}
    allocatable = (status.allocatable if status else None) or {}
    lines.append(
        "capacity: "
        + ", ".join(f"{k} {capacity[k]}" for k in ("cpu", "memory", "pods") if k in capacity)
        + " · allocatable: "
        + ", ".join(f"{k} {allocatable[k]}" for k in ("cpu", "memory", "pods") if k in allocatable)
    )
    taints = [f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in (spec.taints if spec else None) or []]
    lines.append(f"taints: {', '.join(taints) or 'none'}")
    return lines
