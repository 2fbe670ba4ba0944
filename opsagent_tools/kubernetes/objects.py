"""What the tools read off Kubernetes objects: ages, a pod's status as kubectl shows it, terminations, selectors, sizes.

Every tool prints the same facts the same way ("OOMKilled (exit 137) 2m ago", "256Mi"), so the model compares them easily.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from lightkube.models.core_v1 import ContainerStateTerminated, ContainerStatus
from lightkube.models.meta_v1 import LabelSelector
from lightkube.resources.core_v1 import Pod
from lightkube.utils.quantity import parse_quantity

_BINARY = (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_SMALL = {"n": Decimal(10**9), "u": Decimal(10**6)}


def age(when: datetime | None, now: datetime) -> str:
    """How long ago `when` was, in at most two units as kubectl shows ages: 45s, 12m, 3h5m, 4d2h."""
    if when is None:
        return "?"
    seconds = max(0, int((now - when).total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        hours, minutes = divmod(seconds // 60, 60)
        return f"{hours}h{minutes}m" if minutes else f"{hours}h"
    days, hours = divmod(seconds // 3600, 24)
    return f"{days}d{hours}h" if hours and days < 10 else f"{days}d"


def ago(when: datetime | None, now: datetime) -> str:
    """`age` as a relative time: "2m ago"."""
    return f"{age(when, now)} ago" if when is not None else "at an unknown time"


def pod_status(pod: Pod) -> str:
    """The one word kubectl prints in STATUS: a waiting or termination reason beats the phase."""
    status = pod.status
    if pod.metadata is not None and pod.metadata.deletionTimestamp is not None:
        return "Terminating"
    if status is None:
        return "Unknown"
    if status.reason:
        return status.reason  # Evicted, NodeLost, …
    for init in status.initContainerStatuses or []:
        state = init.state
        if state is not None and state.terminated is not None and state.terminated.exitCode != 0:
            return f"Init:{state.terminated.reason or 'Error'}"
        if state is not None and state.waiting is not None and state.waiting.reason not in (None, "PodInitializing"):
            return f"Init:{state.waiting.reason}"
    reason = ""
    for container in status.containerStatuses or []:
        state = container.state
        if state is not None and state.waiting is not None and state.waiting.reason:
            reason = state.waiting.reason
        elif state is not None and state.terminated is not None and not reason:
            reason = state.terminated.reason or f"ExitCode:{state.terminated.exitCode}"
    if reason:
        return reason
    unschedulable = any(c.type == "PodScheduled" and c.reason == "Unschedulable" for c in status.conditions or [])
    return "Pending (Unschedulable)" if unschedulable else (status.phase or "Unknown")


def ready_count(pod: Pod) -> str:
    """Ready containers of all: "1/2"."""
    statuses = (pod.status.containerStatuses if pod.status else None) or []
    total = len(pod.spec.containers) if pod.spec is not None else len(statuses)
    return f"{sum(1 for status in statuses if status.ready)}/{total}"


def restarts(pod: Pod) -> int:
    """Restarts of all the pod's containers."""
    return sum(status.restartCount for status in (pod.status.containerStatuses if pod.status else None) or [])


def container_statuses(pod: Pod) -> list[ContainerStatus]:
    """The statuses of the pod's containers (not its init containers)."""
    return list((pod.status.containerStatuses if pod.status else None) or [])


def termination(terminated: ContainerStateTerminated, now: datetime) -> str:
    """ "OOMKilled (exit 137) 2m ago" """
    signal = f", signal {terminated.signal}" if terminated.signal else ""
    return f"{terminated.reason or 'Terminated'} (exit {terminated.exitCode}{signal}) {ago(terminated.finishedAt, now)}"


def last_terminations(pod: Pod, now: datetime) -> list[str]:
    """For each container that restarted: how its previous run ended ("app: OOMKilled (exit 137) 2m ago")."""
    found = []
    for status in container_statuses(pod):
        last = status.lastState.terminated if status.lastState is not None else None
        if last is not None:
            found.append(f"{status.name}: {termination(last, now)}")
    return found


def selector_text(selector: LabelSelector | None) -> str:
    """A label selector in the API's query syntax: "app=checkout,tier in (web,api)"."""
    if selector is None:
        return ""
    terms = [f"{key}={value}" for key, value in sorted((selector.matchLabels or {}).items())]
    for expression in selector.matchExpressions or []:
        values = ",".join(expression.values or [])
        match expression.operator:
            case "In":
                terms.append(f"{expression.key} in ({values})")
            case "NotIn":
                terms.append(f"{expression.key} notin ({values})")
            case "Exists":
                terms.append(expression.key)
            case _:
                terms.append(f"!{expression.key}")
    return ",".join(terms)


def quantity(text: str | None) -> Decimal | None:
    """A Kubernetes quantity ("256Mi", "250m", "1.5", metrics-server's "429151n") as a number, or None when
    absent or unreadable. lightkube reads every suffix but n and u (nano, micro), which are read here."""
    if not text:
        return None
    try:
        if text[-1:] in _SMALL:
            return Decimal(text[:-1]) / _SMALL[text[-1]]
        return parse_quantity(text)
    except (ArithmeticError, ValueError):
        return None


def format_bytes(value: Decimal | float | None) -> str:
    """Bytes in the binary units Kubernetes limits use: 251Mi, 1.5Gi."""
    if value is None:
        return "?"
    amount = float(value)
    for unit, size in _BINARY:
        if amount >= size:
            shown = amount / size
            return f"{shown:.0f}{unit}" if shown >= 100 or shown.is_integer() else f"{shown:.1f}{unit}"
    return f"{amount:.0f}B"


def format_cpu(cores: Decimal | float | None) -> str:
    """CPU as Kubernetes writes it: 250m below a core, 1.5 from one core up."""
    if cores is None:
        return "?"
    amount = float(cores)
    return f"{amount * 1000:.0f}m" if amount < 1 else f"{amount:.2f}".rstrip("0").rstrip(".")


def percent(part: Decimal | None, whole: Decimal | None) -> str:
    """ " (98%)" of a limit, or "" when either is unknown."""
    if part is None or not whole:
        return ""
    return f" ({float(part) / float(whole):.0%})"
