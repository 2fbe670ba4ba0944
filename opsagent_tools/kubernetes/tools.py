"""The Kubernetes tools the agent calls, all read-only: pods, describe, events, container logs, rollouts, usage.

Descriptions tell the model when each one helps and where it misleads; the allowed namespaces are written into them.
"""

# No `from __future__ import annotations`: the parameter types below are built at run time from the settings
# (the namespace default), and the kernel reads them with get_type_hints.

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Annotated, Literal

from lightkube.resources.core_v1 import Pod
from pydantic import Field

from kernel import CallContext, Tool, ToolFailure, ToolOutput, tool_from_function
from opsagent_tools.kubernetes.api import KubeApi
from opsagent_tools.kubernetes.describe import describe_output
from opsagent_tools.kubernetes.events import events_output
from opsagent_tools.kubernetes.logs import container_logs_output
from opsagent_tools.kubernetes.rollouts import rollout_history
from opsagent_tools.kubernetes.settings import KubernetesSettings
from opsagent_tools.kubernetes.usage import usage_output
from opsagent_tools.kubernetes.workloads import find_workload, pods_headline, pods_table, workload_summary
from opsagent_tools.logs.files import QUERY_SYNTAX
from opsagent_tools.logs.search import LogQuery, canonical_level
from opsagent_tools.time_words import describe_time, parse_time, utc_now

LevelArg = Literal["error", "warn", "warning", "info", "debug", "any"]
MAX_LOG_LIMIT = 200


def kubernetes_tools(
    settings: KubernetesSettings,
    *,
    api: KubeApi | None = None,
    environ: Mapping[str, str] = os.environ,
    now: Callable[[], datetime] = utc_now,
) -> list[Tool]:
    """The read-only Kubernetes tools; `api` replaces the cluster the settings name (tests, evaluation)."""
    kube = api if api is not None else KubeApi.from_settings(settings, environ)
    scope = settings.scope_text()
    default_ns = settings.default_namespace
    Namespace = Annotated[str, Field(description=f"The namespace ({scope}); default {default_ns}.")]

    async def k8s_pods(
        workload: Annotated[
            str, Field(description="deployment/NAME, statefulset/NAME, daemonset/NAME, or a bare name of one.")
        ] = "",
        selector: Annotated[str, Field(description="A label selector instead, e.g. app=checkout,tier!=cache.")] = "",
        namespace: Namespace = default_ns,
    ) -> ToolOutput:
        kube.check_namespace(namespace)
        async with kube.session() as session:
            head = []
            labels = selector.strip()
            subject = labels or namespace
            if workload.strip():
                found = await find_workload(session, namespace, workload)
                head, labels, subject = [workload_summary(found)], found.selector, found.name
            page = await session.list(Pod, namespace, labels=labels)
        where = f"pods in {namespace}" + (f" with labels {labels}" if labels else "")
        current = now()
        return ToolOutput(
            "\n".join([*head, where + ":", *pods_table(page.items, current, more=page.more)]),
            headline=pods_headline(subject, page.items, current, more=page.more),
        )

    k8s_pods.__doc__ = """List the pods of a workload (or of a label selector, or of the namespace) with their
    status as kubectl shows it (CrashLoopBackOff, OOMKilled, Pending…), ready containers, restarts and when the
    last one happened, age, node, and how each container's previous run ended (OOMKilled, Error, exit code).
    Use it first when a service misbehaves on Kubernetes: restarts and terminations tell a crash loop or an OOM
    kill at a glance. Pitfalls: a pod name's hash suffix changes with every rollout, so name the workload, not a
    pod; a Running pod can still be unready (READY 0/1); OOMKilled shows in LAST TERMINATION, not in STATUS."""

    async def k8s_describe(
        kind: Annotated[str, Field(description="What to describe: pod, deployment or node.")],
        name: Annotated[str, Field(min_length=1, description="Its exact name (k8s_pods lists pod names).")],
        namespace: Namespace = default_ns,
        *,
        ctx: CallContext,
    ) -> ToolOutput:
        return await describe_output(kube, kind, name.strip(), namespace, now(), ctx.redactor)

    k8s_describe.__doc__ = """Describe one pod, deployment or node, like `kubectl describe`, compactly: state and
    last termination of each container (reason, exit code, when, message), limits and requests, probes, env
    (values from Secrets appear only as references), conditions, and the object's recent events grouped.
    Use it once k8s_pods shows which pod or deployment is unhealthy, to learn why (probe failures, OOM against a
    limit, an image that cannot be pulled). Secrets themselves can never be read. Pitfalls: events expire about an
    hour after they last happen; node events need the 'default' namespace to be allowed."""

    async def k8s_events(
        namespace: Annotated[str, Field(description=f"A namespace ({scope}), or empty for all of them.")] = default_ns,
        object: Annotated[
            str, Field(description="kind/name (pod/x, deployment/checkout, node/n1) or a bare name prefix (checkout).")
        ] = "",
        reason: Annotated[
            str,
            Field(
                description="Reasons, comma-separated, matched as substrings: BackOff, OOM, FailedScheduling, Unhealthy…"
            ),
        ] = "",
        type: Annotated[
            Literal["", "Warning", "Normal"], Field(description="Warning, Normal, or empty for both.")
        ] = "",
        since: Annotated[str, Field(description="How far back: '30m', '1h' (default), '3h', or ISO-8601.")] = "1h",
        *,
        ctx: CallContext,
    ) -> ToolOutput:
        current = now()
        start = parse_time(since, current)
        window = f"since {describe_time(since, start)}"
        return await events_output(kube, namespace.strip(), object, reason, type, start, window, current, ctx.redactor)

    k8s_events.__doc__ = """List Kubernetes events, grouped by object, reason and message with counts and first/
    last seen, Warnings first: BackOff (crash loops), Unhealthy (failing probes), FailedScheduling (no room or a
    taint), OOMKilling (node's OOM killer), Killing, Pulled/Failed (images), ScalingReplicaSet (rollouts).
    Use it early in a Kubernetes incident to see what the cluster itself noticed, and filter by object (a bare
    name such as checkout also matches its pods and ReplicaSets) or reason to narrow. Pitfalls: events expire
    about an hour after they last happen, so an empty answer says nothing about older trouble; 'Normal' events
    (a rollout, a scale-up) often explain what a Warning followed."""

    async def k8s_logs(
        pod: Annotated[str, Field(min_length=1, description="The pod's exact name (k8s_pods lists them).")],
        namespace: Namespace = default_ns,
        container: Annotated[str, Field(description="The container; default the pod's only or default one.")] = "",
        previous: Annotated[
            bool,
            Field(
                description="Read the run before the last restart: what a crash-looping container said before it died."
            ),
        ] = False,
        since: Annotated[
            str, Field(description="Only lines after this: '15m', '1h', ISO-8601; empty: the newest lines.")
        ] = "",
        level: Annotated[
            LevelArg,
            Field(description="Minimum severity; 'any' (default) keeps unlevelled lines such as stack traces."),
        ] = "any",
        query: Annotated[str, Field(description=f"Only lines matching this: {QUERY_SYNTAX}. Empty: all.")] = "",
        limit: Annotated[
            int, Field(ge=1, le=MAX_LOG_LIMIT, description="Newest matching lines to show; counts cover all.")
        ] = 30,
        *,
        ctx: CallContext,
    ) -> ToolOutput:
        current = now()
        start = parse_time(since, current) if since.strip() else None
        if start is not None and start >= current:
            raise ToolFailure(f"since ({since!r}) is not in the past.", hint="Use e.g. since='30m'.")
        q = LogQuery(
            service=pod.strip(),
            since=start or current,
            until=current,
            level=None if level == "any" else canonical_level(level),
            query=query.strip(),
            limit=limit,
            sample=max(500, limit),
            redactor=ctx.redactor,  # dispatch's: raw lines are redacted before they are grouped and cut
        )
        return await container_logs_output(
            kube,
            namespace=namespace,
            pod=pod.strip(),
            container=container.strip(),
            previous=previous,
            since=start,
            since_text=since,
            q=q,
            now=current,
        )

    k8s_logs.__doc__ = """Read one container's log straight from Kubernetes, grouped like search_logs: the line
    count, messages grouped by count (numbers and ids folded) with first/last times, then the newest lines.
    Use previous=true on a crash-looping or OOMKilled container: its current run has barely started, and the
    cause is in the run that died. Prefer search_logs for a whole service over time; use this for one pod, or
    when the log store has nothing. Pitfalls: an OOM kill leaves no line of its own (the kernel kills the process),
    so the last lines before it matter, and k8s_pods/k8s_describe show the OOMKilled reason; only the newest lines
    are kept by the kubelet, so old history is not here."""

    async def k8s_rollout_history(
        deployment: Annotated[str, Field(min_length=1, description="The deployment's name, e.g. checkout.")],
        namespace: Namespace = default_ns,
    ) -> ToolOutput:
        kube.check_namespace(namespace)
        async with kube.session() as session:
            return await rollout_history(session, namespace, deployment.strip().removeprefix("deployment/"), now())

    k8s_rollout_history.__doc__ = """Show a deployment's rollout history: its revisions (ReplicaSets) newest first,
    when each was created, its pods, images and change-cause annotation, and what changed from the revision
    before: image, memory and CPU limits and requests, env names (never values), command. Use it when trouble
    may have started with a deploy, e.g. OOM kills right after a limit was lowered, or errors after an image
    change. Pitfalls: change-cause is only set when the deployer records it; a revision with 0 pods is an old
    one, kept for rollback."""

    async def k8s_resource_usage(
        namespace: Namespace = default_ns,
        workload: Annotated[str, Field(description="Only this workload's pods (deployment/NAME or a bare name).")] = "",
        nodes: Annotated[bool, Field(description="Show nodes instead of pods.")] = False,
    ) -> ToolOutput:
        return await usage_output(kube, namespace=namespace, workload=workload.strip(), nodes=nodes, now=now())

    k8s_resource_usage.__doc__ = """Live CPU and memory per container (against its limits) or per node (against
    allocatable), from metrics-server, worst memory first. Use it to see which pod is near its memory limit (an
    OOM kill coming) or which node is full. Pitfalls: it is a 15-60 s average right now, not history (use
    query_metrics for trends); many clusters have no metrics-server, and the tool then says so."""

    returns = {
        k8s_pods: "the workload's replica counts, a summary of statuses/restarts/terminations, then a table of pods",
        k8s_describe: "the object's state, containers (state, last termination, limits, probes, env), conditions, events",
        k8s_events: "a header with the count, then one line per group: type, reason, object, ×count, first..last, message",
        k8s_logs: "the container's state and last termination, then the line count, messages grouped, the newest lines",
        k8s_rollout_history: "the deployment's state, then each revision: created, pods, images, change-cause, changes",
        k8s_resource_usage: "one line per container or node: cpu and memory against limits, worst first",
    }
    said = {  # for people: what each does (its docstring is the model's)
        k8s_pods: "List a workload's pods with their status and restarts",
        k8s_describe: "Describe one Kubernetes object: its state, containers and events",
        k8s_events: "List recent Kubernetes events, grouped",
        k8s_logs: "Read a pod's container logs, messages grouped",
        k8s_rollout_history: "List a deployment's revisions and what changed in each",
        k8s_resource_usage: "Show live CPU and memory per pod or node, against limits",
    }
    return [
        tool_from_function(fn, summary=said[fn], timeout=settings.timeout_s, returns=text)
        for fn, text in returns.items()
    ]
