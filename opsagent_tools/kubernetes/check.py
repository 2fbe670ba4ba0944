"""`opsagent check` for Kubernetes: one pod list (limit=1) per allowed namespace, and whether metrics-server answers.

An RBAC gap shows up here per namespace, with its status, rather than in the middle of an incident.
"""

from __future__ import annotations

import asyncio

from lightkube.resources.core_v1 import Pod

from kernel import ToolFailure
from opsagent_tools.kubernetes.api import METRICS_ROUTES, ROUTES, KubeApi, KubeApiError, KubeSession


async def check_kubernetes(kube_api: KubeApi) -> str:
    """What is reachable, as one line; a ToolFailure with the same line when any allowed namespace is not."""
    namespaces = kube_api.namespaces("")
    async with kube_api.session() as kube:
        answers = await asyncio.gather(
            *(kube.list_json(ROUTES[Pod], ns, limit=1) for ns in namespaces), return_exceptions=True
        )
        metrics = await _metrics_server(kube, namespaces[0])
    readable, refused = [], []
    for namespace, answer in zip(namespaces, answers, strict=True):
        label = namespace or "all namespaces"
        if isinstance(answer, KubeApiError):
            if answer.code == 0:
                raise answer  # unreachable or timed out: one message says it all
            refused.append(f"{label} (HTTP {answer.code} {answer.reason})".replace(" )", ")"))
        elif isinstance(answer, BaseException):
            raise answer
        else:
            readable.append(label)
    message = f"{kube_api.server}: pods readable in {', '.join(readable) or 'no allowed namespace'}"
    if refused:
        message += f"; refused in {', '.join(refused)}: bind the read-only role there (deploy/k8s/clusterrole.yaml)"
    message += f"; metrics-server {metrics}"
    if refused:
        raise ToolFailure(message)
    return message


async def _metrics_server(kube: KubeSession, namespace: str | None) -> str:
    try:
        await kube.list_json(METRICS_ROUTES["pods"], namespace, limit=1)
    except KubeApiError as exc:
        match exc.code:
            case 404:
                return "not installed (k8s_resource_usage will say so)"
            case 403:
                return "installed, but reading metrics.k8s.io is forbidden (RBAC)"
            case _:
                return f"not answering (HTTP {exc.code} {exc.reason})".replace(" )", ")")
    return "available"
