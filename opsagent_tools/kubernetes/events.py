"""Kubernetes events, filtered by object, reason and type, grouped with counts and first/last seen.

Both event shapes are read: core/v1's count and first/last timestamps, and the newer eventTime with a series. A
message is redacted as it is read, before it is folded, grouped or cut: a secret cut in two would slip past the
redactor that reads the whole observation later.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from lightkube.resources.core_v1 import Event

from kernel import Redactor, ToolFailure, ToolOutput
from opsagent_tools.kubernetes.api import KubeApi, KubeApiError, KubeSession, refuse_secrets
from opsagent_tools.kubernetes.objects import age, ago
from opsagent_tools.names import capped

EVENT_KINDS = {
    **dict.fromkeys(("pod", "pods", "po"), "Pod"),
    **dict.fromkeys(("deployment", "deployments", "deploy"), "Deployment"),
    **dict.fromkeys(("replicaset", "replicasets", "rs"), "ReplicaSet"),
    **dict.fromkeys(("statefulset", "statefulsets", "sts"), "StatefulSet"),
    **dict.fromkeys(("daemonset", "daemonsets", "ds"), "DaemonSet"),
    **dict.fromkeys(("node", "nodes", "no"), "Node"),
    **dict.fromkeys(("job", "jobs"), "Job"),
    **dict.fromkeys(("cronjob", "cronjobs", "cj"), "CronJob"),
    **dict.fromkeys(("hpa", "horizontalpodautoscaler"), "HorizontalPodAutoscaler"),
    **dict.fromkeys(("service", "services", "svc"), "Service"),
    **dict.fromkeys(("pvc", "persistentvolumeclaim"), "PersistentVolumeClaim"),
}
NODE_EVENTS_NAMESPACE = "default"
"""Where the kubelet records events about nodes (NodeNotReady, OOMKilling from the node problem detector)."""
MAX_GROUPS = 30
MESSAGE_CHARS = 240


@dataclass(frozen=True, slots=True)
class ObjectFilter:
    """Which objects' events: an exact kind and name (sent to the server), or a name prefix (checked here)."""

    kind: str = ""
    name: str = ""

    @classmethod
    def parse(cls, text: str) -> ObjectFilter:
        """ "pod/checkout-7d9f-x2x9k", "deployment/checkout", or a bare name prefix such as "checkout"."""
        kind, _, name = text.strip().rpartition("/")
        if not kind:
            return cls(name=name)
        refuse_secrets(kind)
        canonical = EVENT_KINDS.get(kind.lower())
        if canonical is None:
            known = sorted(set(EVENT_KINDS.values()))
            raise ToolFailure(
                f"unknown object kind '{kind}'.", hint=f"Use one of {', '.join(known)} (or a bare name prefix)."
            )
        return cls(kind=canonical, name=name)

    def field_selector(self) -> str:
        """The server-side filter for an exact kind and name; "" for a prefix."""
        return f"involvedObject.kind={self.kind},involvedObject.name={self.name}" if self.kind else ""

    def describe(self) -> str:
        if self.kind:
            return f" for {self.kind.lower()}/{self.name}"
        return f" for names starting with '{self.name}'" if self.name else ""


@dataclass(slots=True)
class EventGroup:
    """Events of one object with the same type, reason and message."""

    type: str
    reason: str
    obj: str
    message: str
    count: int
    first: datetime | None
    last: datetime | None


def event_times(event: Event) -> tuple[datetime | None, datetime | None, int]:
    """(first seen, last seen, count) from either event shape."""
    first = event.firstTimestamp or event.eventTime or (event.metadata.creationTimestamp if event.metadata else None)
    series = event.series
    last = (series.lastObservedTime if series else None) or event.lastTimestamp or event.eventTime or first
    count = (series.count if series and series.count else None) or event.count or 1
    return first, last, count


async def fetch_events(
    kube: KubeSession, namespaces: Sequence[str | None], wanted: ObjectFilter
) -> tuple[list[Event], bool, list[str]]:
    """The events of these namespaces (None: all), whether some were left unread, and the namespaces that failed.
    One failing namespace (RBAC) does not hide the others; when every one fails, its error is raised."""
    pages = await asyncio.gather(
        *(kube.list(Event, ns, fields=wanted.field_selector()) for ns in namespaces), return_exceptions=True
    )
    failures = [page for page in pages if isinstance(page, BaseException)]
    if len(failures) == len(pages):
        raise failures[0]
    for failure in failures:
        if not isinstance(failure, KubeApiError):
            raise failure
    read = [page for page in pages if not isinstance(page, BaseException)]
    events = [event for page in read for event in page.items]
    return events, any(page.more for page in read), [str(failure) for failure in failures]


def group_events(
    events: Iterable[Event],
    wanted: ObjectFilter,
    *,
    redactor: Redactor,
    reasons: Sequence[str] = (),
    event_type: str = "",
    since: datetime | None = None,
) -> list[EventGroup]:
    """Matching events grouped (their messages redacted by `redactor`, dispatch's), Warnings first, then the most
    recent first."""
    groups: dict[tuple[str, str, str, str], EventGroup] = {}
    for event in events:
        involved = event.involvedObject
        name = involved.name or ""
        if wanted.name and not wanted.kind and not name.startswith(wanted.name):
            continue
        if reasons and not any(r.lower() in (event.reason or "").lower() for r in reasons):
            continue
        if event_type and (event.type or "").lower() != event_type.lower():
            continue
        first, last, count = event_times(event)
        if since is not None and last is not None and last < since:
            continue
        obj = f"{(involved.kind or '?').lower()}/{name}"
        message = " ".join(redactor.redact(event.message or "").split())
        key = (event.type or "", event.reason or "", obj, message)
        group = groups.get(key)
        if group is None:
            groups[key] = EventGroup(key[0], key[1], obj, message, count, first, last)
        else:
            group.count += count
            group.first = min((t for t in (group.first, first) if t is not None), default=None)
            group.last = max((t for t in (group.last, last) if t is not None), default=None)
    return sorted(groups.values(), key=lambda g: (g.type != "Warning", -(g.last.timestamp() if g.last else 0)))


def group_lines(groups: Sequence[EventGroup], now: datetime, *, indent: str = "  ") -> list[str]:
    """One line per group: type, reason, object, ×count, first..last ago, message."""
    lines = []
    for group in groups[:MAX_GROUPS]:
        if group.count > 1 and group.first != group.last:
            seen = f"×{group.count}, {age(group.first, now)}..{ago(group.last, now)}"
        else:
            seen = f"×{group.count}, {ago(group.last, now)}"
        message = group.message if len(group.message) <= MESSAGE_CHARS else group.message[: MESSAGE_CHARS - 1] + "…"
        lines.append(f"{indent}{group.type or '-'} {group.reason or '-'} {group.obj} {seen}: {message}")
    if len(groups) > MAX_GROUPS:
        lines.append(f"{indent}… {len(groups) - MAX_GROUPS} more groups: filter by object or reason")
    return lines


async def events_output(
    api: KubeApi,
    namespace: str,
    obj: str,
    reason: str,
    event_type: str,
    since: datetime,
    window: str,
    now: datetime,
    redactor: Redactor,
) -> ToolOutput:
    """What k8s_events answers: the groups, and the commonest reason in one line."""
    wanted = ObjectFilter.parse(obj) if obj.strip() else ObjectFilter()
    reasons = [r.strip() for r in reason.split(",") if r.strip()]
    namespaces = api.namespaces(namespace)
    async with api.session() as kube:
        events, more, failures = await fetch_events(kube, namespaces, wanted)
    groups = group_events(events, wanted, redactor=redactor, reasons=reasons, event_type=event_type, since=since)
    where = namespace or ("all namespaces" if namespaces == [None] else ", ".join(n for n in namespaces if n))
    filters = wanted.describe() + (f", reason ~ {'|'.join(reasons)}" if reasons else "")
    filters += f", type {event_type}" if event_type else ""
    total = sum(g.count for g in groups)
    warnings = sum(g.count for g in groups if g.type == "Warning")
    lines = [f"events in {where}{filters}, {window}: {total} in {len(groups)} groups ({warnings} Warning)"]
    if not groups:
        seen: Counter[str] = Counter()
        for event in events:
            _, last, count = event_times(event)
            if (last or since) >= since:
                seen[event.reason or "-"] += count
        lines.append(
            "No events match. Events expire an hour after they last happened (the API server's default), so older "
            f"ones are gone. Reasons in this window without the filters: {capped([f'{r} ×{n}' for r, n in seen.most_common()])}."
        )
    lines += group_lines(groups, now)
    lines += [f"note: {failure}" for failure in failures]
    if more:
        lines.append("note: more events exist than were read (list_limit): filter by object to see all of one object's")
    return ToolOutput("\n".join(lines), headline=events_headline(groups, window))


def events_headline(groups: Sequence[EventGroup], window: str) -> str:
    """ "60 events, 58 Warning · top BackOff ×46 on 3 objects": the reason seen most often, Warnings before Normal."""
    if not groups:
        return f"no events {window}"
    total = sum(g.count for g in groups)
    warnings = sum(g.count for g in groups if g.type == "Warning")
    reasons: Counter[tuple[bool, str]] = Counter()
    objects: dict[str, set[str]] = {}
    for group in groups:
        reasons[(group.type == "Warning", group.reason or "-")] += group.count
        objects.setdefault(group.reason or "-", set()).add(group.obj)
    (_, reason), count = max(reasons.items(), key=lambda item: (item[0][0], item[1]))
    on = objects[reason]
    where = next(iter(on)) if len(on) == 1 else f"{len(on)} objects"
    return f"{total} event{'' if total == 1 else 's'}, {warnings} Warning · top {reason} ×{count} on {where}"
