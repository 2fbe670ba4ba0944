"""Container logs read from the kubelet through the API server, shown exactly as `search_logs` shows log lines.

`previous=true` reads the run that crashed (the only place a crash loop's last words are); the lines go through the
same parsing, level and query filters, grouping and truncation as every log backend.
"""

from __future__ import annotations

from datetime import datetime

from lightkube.models.core_v1 import ContainerStatus
from lightkube.resources.core_v1 import Pod

from kernel import ToolFailure, ToolOutput
from opsagent_tools.kubernetes.api import KubeApi, KubeApiError, KubeSession
from opsagent_tools.kubernetes.objects import pod_status, termination
from opsagent_tools.logs.files import text_matcher
from opsagent_tools.logs.headline import log_headline
from opsagent_tools.logs.records import record_from_line
from opsagent_tools.logs.search import LogQuery, LogRecord, LogSearchResult, format_result
from opsagent_tools.logs.source_redaction import redact_in_order
from opsagent_tools.names import capped, unknown_name
from opsagent_tools.time_words import describe_time, parse_iso

DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"


async def container_logs_output(
    api: KubeApi,
    *,
    namespace: str,
    pod: str,
    container: str,
    previous: bool,
    since: datetime | None,
    since_text: str,
    q: LogQuery,
    now: datetime,
) -> ToolOutput:
    """What k8s_logs answers: the container's state, then its lines grouped and the newest shown; for people, the
    container and its lines in one line."""
    settings = api.settings
    api.check_namespace(namespace)
    async with api.session() as kube:
        found = await find_pod(kube, namespace, pod)
        name, choice = pick_container(found, container)
        status = next(
            (s for s in (found.status.containerStatuses if found.status else None) or [] if s.name == name), None
        )
        last = status.lastState.terminated if status is not None and status.lastState is not None else None
        if previous and last is None:
            raise ToolFailure(
                f"container {name} of pod {pod} has no previous run to read "
                f"(restarts: {status.restartCount if status else 0}).",
                hint="Call k8s_logs without previous for its current log.",
            )
        params = {"container": name, "timestamps": "true", "tailLines": str(settings.log_lines)}
        params |= {"limitBytes": str(settings.log_bytes)}
        params |= {"previous": "true"} if previous else {}
        if since is not None:
            params["sinceSeconds"] = str(max(1, int((now - since).total_seconds())))
        try:
            text = await kube.log(namespace, pod, params, settings.log_bytes)
        except KubeApiError as exc:
            if exc.code == 400 and not previous and status is not None and status.restartCount:
                raise ToolFailure(
                    f"{exc} It has restarted {status.restartCount} times.", hint="previous=true reads its last run."
                ) from None
            raise
    head = _state_line(found, name, choice, status, previous, now)
    lines = text.splitlines()
    service = f"{pod}/{name}" + (" previous run" if previous else "")
    run = f"{name}{' previous run' if previous else ''}"
    records = redact_in_order(parse_log_lines(lines, service=service, pod=pod), q.redactor)
    if not records:
        empty = "in this window" if since is not None else "at all"
        hint = (
            " previous=true reads the run before the last restart."
            if status and status.restartCount and not previous
            else ""
        )
        return ToolOutput(f"{head}\nthe container wrote no log lines {empty}.{hint}", headline=f"{run}: no log lines")
    match = text_matcher(q.query)
    shown = [r for r in records if q.accepts(r.level) and (match is None or match(_searchable(r)))]
    result = LogSearchResult(
        total=len(shown), records=shown[: q.sample], total_is_lower_bound=len(lines) >= settings.log_lines
    )
    if result.total_is_lower_bound:
        result.notes.append(f"only the newest {settings.log_lines} lines were read (tools.kubernetes.log_lines)")
    framed = LogQuery(service, since or records[-1].timestamp, now, q.level, q.query, q.limit, q.sample)
    if since is not None:
        window = f"{describe_time(since_text, since)}..now"
    else:
        window = f"the newest {settings.log_lines} lines" if result.total_is_lower_bound else "the whole log"
    view = format_result(framed, result, window=window)
    return ToolOutput(f"{head}\n{view.text}", headline=f"{run}: {log_headline(framed, result)}", more=view.more)


async def find_pod(kube: KubeSession, namespace: str, name: str) -> Pod:
    """The pod; a ToolFailure naming pods with close names (or whose names start with it) when there is none."""
    try:
        return await kube.get(Pod, name, namespace)
    except KubeApiError as exc:
        if exc.code != 404:
            raise
    names = [p.metadata.name for p in (await kube.list(Pod, namespace)).items if p.metadata and p.metadata.name]
    prefixed = [n for n in names if n.startswith(name)]
    if prefixed:
        raise ToolFailure(
            f"no pod '{name}' in namespace '{namespace}'. Pods whose names start with it: {capped(prefixed, 8)}.",
            hint="A workload's pods: k8s_pods.",
        )
    raise ToolFailure(unknown_name("pod", name, names, where=f"in namespace '{namespace}'"))


def pick_container(pod: Pod, wanted: str) -> tuple[str, str]:
    """The container to read and how it was chosen ("" when named or the only one)."""
    spec = pod.spec
    names = [c.name for c in spec.containers] if spec is not None else []
    init = [c.name for c in (spec.initContainers if spec else None) or []]
    if wanted:
        if wanted in names or wanted in init:
            return wanted, ""
        raise ToolFailure(
            f"pod {pod.metadata.name if pod.metadata else '?'} has no container '{wanted}'; containers: {capped(names)}"
            + (f" (init: {capped(init)})" if init else "")
        )
    if len(names) == 1:
        return names[0], ""
    annotated = ((pod.metadata.annotations if pod.metadata else None) or {}).get(DEFAULT_CONTAINER)
    chosen = annotated if annotated in names else names[0]
    return chosen, f"the default of {', '.join(names)}; pass container= for another"


def parse_log_lines(lines: list[str], *, service: str, pod: str) -> list[LogRecord]:
    """Records from `timestamps=true` lines ("2026-11-30T05:39:58.123456789Z message"), newest first; a line with
    no readable time (cut short by the byte limit) takes the time of the line before it."""
    records: list[LogRecord] = []
    when: datetime | None = None
    for line in lines:
        stamp, _, rest = line.partition(" ")
        parsed = parse_iso(stamp)
        if parsed is None:
            rest = line
        else:
            when = parsed
        if when is None or not rest.strip():
            continue
        records.append(record_from_line(when, rest, service, "", {"pod": pod}))
    records.reverse()  # newest first; the sort is stable, so lines of one instant stay newest first too
    records.sort(key=lambda record: record.timestamp, reverse=True)
    return records


def _searchable(record: LogRecord) -> str:
    return " ".join([record.message, *record.fields.values()])


def _state_line(pod: Pod, name: str, choice: str, status: ContainerStatus | None, previous: bool, now: datetime) -> str:
    chosen = f" ({choice})" if choice else ""
    run = "previous run" if previous else "current run"
    facts = [f"pod {pod.metadata.name if pod.metadata else '?'} {pod_status(pod)}", f"container {name}{chosen}, {run}"]
    if status is not None:
        facts.append(f"restarts {status.restartCount}")
        last = status.lastState.terminated if status.lastState is not None else None
        if last is not None:
            facts.append(f"last run ended {termination(last, now)}")
    return "; ".join(facts)
