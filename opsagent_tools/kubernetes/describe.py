"""`kubectl describe`, compact: a pod, deployment or node with its containers, conditions and recent events.

Environment values that come from Secrets are printed as references (`<secret db key password>`), never fetched;
literal values pass through the dispatcher's redaction like every other observation.
"""

from __future__ import annotations

from datetime import datetime
from typing import assert_never

from lightkube.models.core_v1 import Container, ContainerStatus, EnvVar, PodSpec, Probe
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import Node, Pod

from kernel import ToolFailure, ToolOutput
from opsagent_tools.kubernetes.api import KubeApi, KubeApiError, KubeSession, refuse_secrets
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
    termination,
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


async def describe_output(api: KubeApi, kind: str, name: str, namespace: str, now: datetime) -> ToolOutput:
    """What k8s_describe answers: the object described, and its state in one line."""
    refuse_secrets(kind)
    model = DESCRIBE_KINDS.get(kind.strip().lower())
    if model is None:
        raise ToolFailure(f"k8s_describe reads a pod, deployment or node, not '{kind}'; for workload pods use k8s_pods")
    async with api.session() as kube:
        if model is Node:
            obj = await _get(kube, Node, name, None)
            event_namespace = NODE_EVENTS_NAMESPACE
        else:
            api.check_namespace(namespace)
            obj = await _get(kube, model, name, namespace)
            event_namespace = namespace
        lines = await _event_lines(api, kube, model, name, event_namespace, now)
    match obj:
        case Pod():
            lines = pod_lines(obj, now) + lines
        case Deployment():
            lines = deployment_lines(obj, now) + lines
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
    api: KubeApi, kube: KubeSession, model: type[Pod | Deployment | Node], name: str, namespace: str, now: datetime
) -> list[str]:
    if not api.settings.allows(namespace):
        return [f"events: not read (node events are kept in namespace '{namespace}', which is not allowed)"]
    wanted = ObjectFilter(kind=model.__name__, name=name)
    events, _, failures = await fetch_events(kube, [namespace], wanted)
    groups = group_events(events, wanted)
    if not groups:
        return ["events: none (they expire an hour after they last happen)", *[f"note: {f}" for f in failures]]
    return [f"events ({sum(g.count for g in groups)}):", *group_lines(groups[:EVENT_GROUPS], now)]


def pod_lines(pod: Pod, now: datetime) -> list[str]:
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
    statuses = {s.name: s for s in (status.containerStatuses if status else None) or []}
    init_statuses = {s.name: s for s in (status.initContainerStatuses if status else None) or []}
    if spec is not None:
        for container in spec.initContainers or []:
            lines += container_lines(container, init_statuses.get(container.name), now, label="init container")
        for container in spec.containers:
            lines += container_lines(container, statuses.get(container.name), now)
        lines += volume_lines(spec)
    return lines


def deployment_lines(deployment: Deployment, now: datetime) -> list[str]:
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
        for container in template_spec.containers:
            lines += container_lines(container, None, now)
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


def container_lines(
    container: Container, status: ContainerStatus | None, now: datetime, *, label: str = "container"
) -> list[str]:
    """A container's image, state, last termination, resources, probes, env (secret-sourced values as references)."""
    lines = [f"{label} {container.name}: image {container.image}"]
    if status is not None:
        state = status.state
        if state is not None and state.waiting is not None:
            now_text = f"Waiting {state.waiting.reason or ''} {('(' + state.waiting.message + ')') if state.waiting.message else ''}"
        elif state is not None and state.terminated is not None:
            now_text = f"Terminated {termination(state.terminated, now)}"
        elif state is not None and state.running is not None:
            now_text = f"Running since {ago(state.running.startedAt, now)}"
        else:
            now_text = "unknown"
        lines.append(
            f"  state: {' '.join(now_text.split())}; ready {str(status.ready).lower()}, restarts {status.restartCount}"
        )
        last = status.lastState.terminated if status.lastState is not None else None
        if last is not None:
            ran = f", ran {age(last.startedAt, last.finishedAt)}" if last.startedAt and last.finishedAt else ""
            message = f": {' '.join(last.message.split())[:200]}" if last.message else ""
            lines.append(f"  last state: Terminated {termination(last, now)}{ran}{message}")
    resources = container.resources
    limits = ", ".join(f"{k}={v}" for k, v in sorted(((resources.limits if resources else None) or {}).items()))
    requests = ", ".join(f"{k}={v}" for k, v in sorted(((resources.requests if resources else None) or {}).items()))
    lines.append(f"  limits: {limits or 'none'} · requests: {requests or 'none'}")
    probes = [
        f"{kind} {_probe(probe)}"
        for kind, probe in (
            ("liveness", container.livenessProbe),
            ("readiness", container.readinessProbe),
            ("startup", container.startupProbe),
        )
        if probe is not None
    ]
    if probes:
        lines.append(f"  probes: {'; '.join(probes)}")
    if container.env:
        lines.append("  env: " + "; ".join(env_text(variable) for variable in container.env))
    sources = []
    for source in container.envFrom or []:
        prefix = f" (prefix {source.prefix})" if source.prefix else ""
        if source.secretRef is not None:
            sources.append(f"<every key of secret {source.secretRef.name}, values not shown>{prefix}")
        if source.configMapRef is not None:
            sources.append(f"<every key of configmap {source.configMapRef.name}>{prefix}")
    if sources:
        lines.append(f"  env from: {', '.join(sources)}")
    mounts = [f"{m.mountPath} from {m.name}{' (ro)' if m.readOnly else ''}" for m in container.volumeMounts or []]
    if mounts:
        lines.append(f"  mounts: {', '.join(mounts)}")
    return lines


def env_text(variable: EnvVar) -> str:
    """NAME=value, or NAME=<where the value comes from> for references: a secret's value is never shown."""
    source = variable.valueFrom
    if source is None:
        return f"{variable.name}={variable.value or ''}"
    if source.secretKeyRef is not None:
        return f"{variable.name}=<secret {source.secretKeyRef.name} key {source.secretKeyRef.key}>"
    if source.configMapKeyRef is not None:
        return f"{variable.name}=<configmap {source.configMapKeyRef.name} key {source.configMapKeyRef.key}>"
    if source.fieldRef is not None:
        return f"{variable.name}=<field {source.fieldRef.fieldPath}>"
    if source.resourceFieldRef is not None:
        return f"{variable.name}=<resource {source.resourceFieldRef.resource}>"
    return f"{variable.name}=<from a file or another source>"


def volume_lines(spec: PodSpec) -> list[str]:
    """Each volume's name and kind; a secret volume names the secret, nothing more."""
    volumes = []
    for volume in spec.volumes or []:
        if volume.secret is not None:
            volumes.append(f"{volume.name} (secret {volume.secret.secretName})")
        elif volume.configMap is not None:
            volumes.append(f"{volume.name} (configmap {volume.configMap.name})")
        elif volume.persistentVolumeClaim is not None:
            volumes.append(f"{volume.name} (pvc {volume.persistentVolumeClaim.claimName})")
        else:
            kind = next((k for k, v in volume.to_dict().items() if k != "name" and v is not None), "?")
            volumes.append(f"{volume.name} ({kind})")
    return [f"volumes: {', '.join(volumes)}"] if volumes else []


def _probe(probe: Probe) -> str:
    if probe.httpGet is not None:
        target = f"http-get :{probe.httpGet.port}{probe.httpGet.path or '/'}"
    elif probe.tcpSocket is not None:
        target = f"tcp :{probe.tcpSocket.port}"
    elif probe.exec is not None:
        target = f"exec {' '.join(probe.exec.command or [])[:80]}"
    elif probe.grpc is not None:
        target = f"grpc :{probe.grpc.port}"
    else:
        target = "?"
    return (
        f"{target} (delay {probe.initialDelaySeconds or 0}s, timeout {probe.timeoutSeconds or 1}s, "
        f"period {probe.periodSeconds or 10}s, fails after {probe.failureThreshold or 3})"
    )
