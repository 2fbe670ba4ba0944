"""A container as `k8s_describe` shows it: state, last termination, resources, command, probes, env and mounts.

Credentials are masked by where they sit, before any text is cut: a literal env value whose name holds one
(`HMAC_KEY`, `ADMIN_PW`) or that looks like key material, and the word after a credential flag in the command
or an exec probe (`redis-cli -a …`). Values from Secrets are shown as references, never fetched.
"""

from __future__ import annotations

from datetime import datetime

from lightkube.models.core_v1 import Container, ContainerStatus, EnvVar, EphemeralContainer, PodSpec, Probe

from kernel import Redactor, masked_argv, masked_env_value
from opsagent_tools.kubernetes.objects import age, ago, termination

AnyContainer = Container | EphemeralContainer
COMMAND_CHARS = 160
"""A command (or an exec probe) is cut after this many characters, once masked."""
MESSAGE_CHARS = 200


def container_lines(
    container: AnyContainer,
    status: ContainerStatus | None,
    now: datetime,
    redactor: Redactor,
    *,
    label: str = "container",
) -> list[str]:
    """A container's image, state, last termination, resources, command, probes, env and mounts."""
    lines = [f"{label} {container.name}: image {container.image}"]
    if status is not None:
        lines += _status_lines(status, now, redactor)
    resources = container.resources
    limits = ", ".join(f"{k}={v}" for k, v in sorted(((resources.limits if resources else None) or {}).items()))
    requests = ", ".join(f"{k}={v}" for k, v in sorted(((resources.requests if resources else None) or {}).items()))
    lines.append(f"  limits: {limits or 'none'} · requests: {requests or 'none'}")
    if container.command or container.args:
        lines.append(f"  command: {command_text([*(container.command or []), *(container.args or [])], redactor)}")
    probes = [
        f"{kind} {_probe(probe, redactor)}"
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
        lines.append("  env: " + "; ".join(env_text(variable, redactor) for variable in container.env))
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


def _status_lines(status: ContainerStatus, now: datetime, redactor: Redactor) -> list[str]:
    state = status.state
    if state is not None and state.waiting is not None:
        message = f"({redactor.redact(state.waiting.message)})" if state.waiting.message else ""
        now_text = f"Waiting {state.waiting.reason or ''} {message}"
    elif state is not None and state.terminated is not None:
        now_text = f"Terminated {termination(state.terminated, now)}"
    elif state is not None and state.running is not None:
        now_text = f"Running since {ago(state.running.startedAt, now)}"
    else:
        now_text = "unknown"
    lines = [
        f"  state: {' '.join(now_text.split())}; ready {str(status.ready).lower()}, restarts {status.restartCount}"
    ]
    last = status.lastState.terminated if status.lastState is not None else None
    if last is not None:
        ran = f", ran {age(last.startedAt, last.finishedAt)}" if last.startedAt and last.finishedAt else ""
        message = f": {_cut(redactor.redact(' '.join(last.message.split())), MESSAGE_CHARS)}" if last.message else ""
        lines.append(f"  last state: Terminated {termination(last, now)}{ran}{message}")
    return lines


def command_text(argv: list[str], redactor: Redactor) -> str:
    """A command's words, credentials masked by position, then cut: `redis-cli -a [REDACTED:password] ping`."""
    return _cut(" ".join(masked_argv(argv, redactor.redact)), COMMAND_CHARS)


def env_text(variable: EnvVar, redactor: Redactor) -> str:
    """NAME=value, the value masked when the name or its shape says it is a credential; NAME=<where the value comes
    from> for references: a secret's value is never shown."""
    source = variable.valueFrom
    if source is None:
        return f"{variable.name}={masked_env_value(variable.name, variable.value or '', redactor.redact)}"
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


def pod_spec_containers(spec: PodSpec) -> list[tuple[str, AnyContainer]]:
    """Every container of a pod spec with its label: init containers, containers, then ephemeral (debug) ones."""
    return [
        *(("init container", c) for c in spec.initContainers or []),
        *(("container", c) for c in spec.containers),
        *(("ephemeral container", c) for c in spec.ephemeralContainers or []),
    ]


def _probe(probe: Probe, redactor: Redactor) -> str:
    if probe.httpGet is not None:
        target = f"http-get :{probe.httpGet.port}{probe.httpGet.path or '/'}"
    elif probe.tcpSocket is not None:
        target = f"tcp :{probe.tcpSocket.port}"
    elif probe.exec is not None:
        target = f"exec {command_text(probe.exec.command or [], redactor)}"
    elif probe.grpc is not None:
        target = f"grpc :{probe.grpc.port}"
    else:
        target = "?"
    return (
        f"{target} (delay {probe.initialDelaySeconds or 0}s, timeout {probe.timeoutSeconds or 1}s, "
        f"period {probe.periodSeconds or 10}s, fails after {probe.failureThreshold or 3})"
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
