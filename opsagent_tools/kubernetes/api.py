"""The Kubernetes API as the tools read it: GETs of a closed set of resources, decoded into lightkube's typed models.

Secrets are not in that set, so no request for one can even be built; every namespace is checked against the
allowlist here, where all requests are made; every failure becomes a ToolFailure that says what to do next.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import httpx2
import yaml
from lightkube.config.client_adapter import ConnectionParams
from lightkube.config.kubeconfig import DEFAULT_KUBECONFIG, KubeConfig, SingleConfig
from lightkube.config.models import Cluster, User
from lightkube.core.dictmixin import DictMixin
from lightkube.core.exceptions import ConfigError
from lightkube.resources.apps_v1 import DaemonSet, Deployment, ReplicaSet, StatefulSet
from lightkube.resources.core_v1 import Event, Namespace, Node, Pod

from kernel import ToolFailure
from opsagent_tools.bounded_json import JsonTooDeep, load_json
from opsagent_tools.kubernetes.settings import KubernetesSettings

_OBJECT_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
"""A Kubernetes object name (a DNS subdomain): no slash, so a name can never reach another path (../secrets)."""
_NAMESPACE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
M = TypeVar("M", bound=DictMixin)
T = TypeVar("T")
METRICS_API = "apis/metrics.k8s.io/v1beta1"


@dataclass(frozen=True, slots=True)
class Route:
    """Where a kind of object lives in the REST API, and its names for people."""

    prefix: str
    plural: str
    namespaced: bool
    kind: str
    """The kubectl-style lower-case name: pod, deployment, …"""


ROUTES: Mapping[type[DictMixin], Route] = {
    Pod: Route("api/v1", "pods", True, "pod"),
    Event: Route("api/v1", "events", True, "event"),
    Node: Route("api/v1", "nodes", False, "node"),
    Namespace: Route("api/v1", "namespaces", False, "namespace"),
    Deployment: Route("apis/apps/v1", "deployments", True, "deployment"),
    ReplicaSet: Route("apis/apps/v1", "replicasets", True, "replicaset"),
    StatefulSet: Route("apis/apps/v1", "statefulsets", True, "statefulset"),
    DaemonSet: Route("apis/apps/v1", "daemonsets", True, "daemonset"),
}
"""Every kind of object any tool can read. Secrets are deliberately absent (and ConfigMaps, which often hold them)."""
METRICS_ROUTES = {
    "pods": Route(METRICS_API, "pods", True, "pod metrics"),
    "nodes": Route(METRICS_API, "nodes", False, "node metrics"),
}


SECRETS_REFUSED = (
    "Secrets are never readable through OpsAgent, whatever the request: their values must not reach the model, "
    "Slack or a trace."
)
SECRETS_ELSEWHERE = (
    "To see which secret a workload uses, describe its pod or deployment: env values that come from secrets are "
    "shown there as references, without their values."
)


def refuse_secrets(kind: str) -> None:
    """Raise the refusal when `kind` (as a person or model writes it: secret, secrets, Secret.v1) means Secrets."""
    if kind.strip().lower().split(".", 1)[0].rpartition("/")[2] in ("secret", "secrets"):
        raise ToolFailure(SECRETS_REFUSED, hint=SECRETS_ELSEWHERE)


TELL_AND_MOVE_ON = "Tell the user, and use other evidence (metrics, logs) meanwhile."
"""The model's hint when the cluster cannot be read: a person must fix it, and the investigation goes on."""


class KubeApiError(ToolFailure):
    """The API server refused or failed a request; `code` is its HTTP status (0: no answer)."""

    def __init__(self, said: str, *, code: int, reason: str = "", hint: str = "") -> None:
        super().__init__(said, hint=hint)
        self.code, self.reason = code, reason


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One list request's objects; `more` when the server holds further ones that were not fetched."""

    items: list[T]
    more: bool = False


def load_config(settings: KubernetesSettings, environ: Mapping[str, str] = os.environ) -> SingleConfig:
    """The cluster, user and context the settings name; a ValueError that says what to fix otherwise."""
    try:
        if settings.in_cluster:
            return _checked(KubeConfig.from_service_account().get())
        path = settings.kubeconfig or Path(environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG).expanduser()
        return _checked(_kubeconfig(path).get(settings.context))
    except ConfigError as exc:
        where = "the pod's service account (in_cluster = true)" if settings.in_cluster else "the kubeconfig"
        raise ValueError(f"tools.kubernetes: cannot read {where}: {exc}") from None
    except KeyError as exc:
        if settings.in_cluster:
            raise ValueError(
                f"tools.kubernetes: in_cluster = true, but {exc} is not set: this process does not run in a pod; "
                "use kubeconfig (and context) instead"
            ) from None
        raise ValueError(
            f"tools.kubernetes: the kubeconfig's context refers to {exc}, which it does not define"
        ) from None


def _kubeconfig(path: Path) -> KubeConfig:
    """The kubeconfig file at `path`, read as lightkube reads it, but a file that is not YAML, or not a kubeconfig,
    is a ValueError naming the file and where it breaks (lightkube lets the parser's own error through)."""
    if not path.is_file():
        raise ConfigError(f"Configuration file {path} not found")
    try:
        data = yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ValueError(
            f"tools.kubernetes: the kubeconfig {path} is not valid YAML: {exc.problem or exc.context}{where}"
        ) from None
    except yaml.YAMLError as exc:
        raise ValueError(f"tools.kubernetes: the kubeconfig {path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("clusters"), list):
        raise ValueError(
            f"tools.kubernetes: {path} is not a kubeconfig: it has no list of clusters (kubectl config view shows "
            "what one holds)"
        )
    try:
        return KubeConfig.from_dict(data, fname=path)
    except KeyError as exc:
        problem = f"{exc} is missing (each entry of clusters, contexts and users has a name, and its cluster, "
        problem += "context or user)"
    except TypeError:
        problem = "an entry of clusters, contexts or users is not a mapping"
    except ValueError as exc:  # lightkube's decoder: a value of the wrong type, and where it is
        problem = str(exc)
    raise ValueError(f"tools.kubernetes: the kubeconfig {path} is malformed: {problem}")


def _checked(config: SingleConfig | None) -> SingleConfig:
    if config is None or config.user is None:
        raise ConfigError("the selected context names no user, so requests could not be authenticated")
    return config


class KubeApi:
    """A cluster's connection settings (auth, TLS) made once; `session()` opens a connection per tool call."""

    def __init__(self, settings: KubernetesSettings, config: SingleConfig) -> None:
        self.settings = settings
        self.server = config.cluster.server
        timeout = httpx2.Timeout(settings.request_timeout_s)
        try:
            self._params = ConnectionParams(timeout=timeout).httpx_params(config)
        except (OSError, ConfigError) as exc:
            raise ValueError(f"tools.kubernetes: cannot set up TLS or credentials for {self.server}: {exc}") from None

    @classmethod
    def from_settings(cls, settings: KubernetesSettings, environ: Mapping[str, str] = os.environ) -> KubeApi:
        """The API of the cluster the settings name; a ValueError now, at start-up, if it cannot be set up."""
        return cls(settings, load_config(settings, environ))

    @classmethod
    def from_server(cls, settings: KubernetesSettings, url: str, token: str) -> KubeApi:
        """The API at `url` with a bearer token, whatever the settings' kubeconfig says (evaluation, tests)."""
        return cls(settings, KubeConfig.from_one(cluster=Cluster(server=url), user=User(token=token)).get())

    @asynccontextmanager
    async def session(self) -> AsyncIterator[KubeSession]:
        """One connection pool for the requests of one tool call, closed when the call ends."""
        async with httpx2.AsyncClient(**self._params) as http:
            yield KubeSession(self, http)

    def check_namespace(self, namespace: str) -> str:
        """`namespace` if the allowlist has it; else a ToolFailure naming the allowed ones."""
        if not _NAMESPACE_NAME.fullmatch(namespace):
            raise ToolFailure(
                f"'{namespace}' is not a namespace name (lower-case letters, digits and '-'); "
                f"allowed: {self.settings.scope_text()}"
            )
        if not self.settings.allows(namespace):
            raise ToolFailure(
                f"namespace '{namespace}' is not allowed; allowed: {self.settings.scope_text()}.",
                hint="Use one of those; if the user needs this one, they can add it to tools.kubernetes.namespaces.",
            )
        return namespace

    def namespaces(self, namespace: str) -> list[str | None]:
        """What "this namespace, or every allowed one" means: one allowed name, or None (all) / the allowlist for ""."""
        if namespace:
            return [self.check_namespace(namespace)]
        return [None] if self.settings.all_namespaces else list(self.settings.namespaces)


class KubeSession:
    """The requests of one tool call; every one goes through `_send`, which checks scope and reads failures."""

    def __init__(self, api: KubeApi, http: httpx2.AsyncClient) -> None:
        self._api, self._http = api, http

    async def get(self, model: type[M], name: str, namespace: str | None = None) -> M:
        """One object; a KubeApiError with code 404 when it does not exist."""
        route = ROUTES[model]
        what = f"get {route.kind} '{name}'" + (f" in namespace '{namespace}'" if route.namespaced else "")
        response = await self._send(self._path(route, namespace, name), {}, what, namespace)
        try:
            return model.from_dict(load_json(response.content))  # type: ignore[return-value]
        except (TypeError, ValueError) as exc:
            raise _garbled(self._api.server, what, exc) from None

    async def list(
        self, model: type[M], namespace: str | None = None, *, labels: str = "", fields: str = ""
    ) -> Page[M]:
        """Up to `list_limit` objects (namespace None: every namespace, when all are allowed)."""
        route = ROUTES[model]
        payload = await self.list_json(route, namespace, labels=labels, fields=fields)
        what = f"list {route.plural}"
        try:
            items = [model.from_dict(item) for item in payload.get("items") or []]
        except (TypeError, ValueError) as exc:
            raise _garbled(self._api.server, what, exc) from None
        return Page(items, more=bool((payload.get("metadata") or {}).get("continue")))

    async def list_json(
        self, route: Route, namespace: str | None, *, labels: str = "", fields: str = "", limit: int | None = None
    ) -> dict[str, Any]:
        """A list response as JSON (for kinds lightkube has no model of, such as metrics.k8s.io's)."""
        params = {"limit": str(limit or self._api.settings.list_limit)}
        params |= {"labelSelector": labels} if labels else {}
        params |= {"fieldSelector": fields} if fields else {}
        scope = f" in namespace '{namespace}'" if namespace else (" in all namespaces" if route.namespaced else "")
        what = f"list {route.plural}{scope}" + (f" with labels '{labels}'" if labels else "")
        response = await self._send(self._path(route, namespace), params, what, namespace)
        try:
            payload = load_json(response.content)
        except ValueError as exc:
            raise _garbled(self._api.server, what, exc) from None
        if not isinstance(payload, dict):
            raise _garbled(self._api.server, what, TypeError("not a JSON object"))
        return payload

    async def log(self, namespace: str, pod: str, params: Mapping[str, str], max_bytes: int) -> str:
        """A container's log as text (the API's params: container, previous, tailLines, …), at most `max_bytes`."""
        what = f"read the log of pod '{pod}' in namespace '{namespace}'"
        path = self._path(ROUTES[Pod], namespace, pod) + "/log"
        chunks: list[bytes] = []
        size = 0
        try:
            async with self._http.stream("GET", path, params=dict(params)) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise _refusal(response, what, namespace)
                async for chunk in response.aiter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size >= max_bytes:
                        break
        except httpx2.HTTPError as exc:
            raise self._unanswered(exc, what) from None
        except ConfigError as exc:
            raise _credentials_failed(exc) from None
        return b"".join(chunks)[:max_bytes].decode("utf-8", errors="replace")

    def _path(self, route: Route, namespace: str | None, name: str = "") -> str:
        if name and not _OBJECT_NAME.fullmatch(name):
            raise ToolFailure(
                f"'{name}' is not a Kubernetes object name (lower-case letters, digits, '-' and '.'; no '/').",
                hint="Give the bare name, e.g. checkout-7d9f8c6b5-x2x9k.",
            )
        parts = [route.prefix]
        if route.namespaced and namespace is not None:
            parts += ["namespaces", self._api.check_namespace(namespace)]
        elif route.namespaced and not self._api.settings.all_namespaces:
            raise ToolFailure(f"listing {route.plural} across all namespaces is not allowed.", hint="Name a namespace.")
        parts.append(route.plural)
        return "/".join([*parts, name] if name else parts)

    async def _send(self, path: str, params: Mapping[str, str], what: str, namespace: str | None) -> httpx2.Response:
        try:
            response = await self._http.get(path, params=dict(params))
        except httpx2.HTTPError as exc:
            raise self._unanswered(exc, what) from None
        except ConfigError as exc:
            raise _credentials_failed(exc) from None
        if response.status_code != 200:
            raise _refusal(response, what, namespace)
        return response

    def _unanswered(self, exc: httpx2.HTTPError, what: str) -> KubeApiError:
        if isinstance(exc, httpx2.TimeoutException):
            seconds = self._api.settings.request_timeout_s
            return KubeApiError(
                f"The Kubernetes API server did not answer within {seconds:g} s (trying to {what}).",
                hint="Narrow the request (one namespace, a workload or selector, fewer log lines) and try again; if "
                "it keeps timing out, the API server is overloaded: use other evidence meanwhile.",
                code=0,
                reason="Timeout",
            )
        return KubeApiError(
            f"Cannot reach the Kubernetes API server at {self._api.server} ({type(exc).__name__}: {exc}) to {what}. "
            "The cluster or the network may be down, or tools.kubernetes points at the wrong cluster.",
            hint=TELL_AND_MOVE_ON,
            code=0,
            reason="Unreachable",
        )


def _status(response: httpx2.Response) -> tuple[str, str]:
    """The (reason, message) of a Kubernetes Status body, or ("", the start of the body) when it is not one."""
    try:
        body = load_json(response.content)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return str(body.get("reason") or ""), str(body.get("message") or "")[:400]
    return "", response.text.strip()[:200]


def _refusal(response: httpx2.Response, what: str, namespace: str | None) -> KubeApiError:
    """The model-facing error for a non-200 answer, by status code."""
    code = response.status_code
    reason, message = _status(response)
    detail = f"HTTP {code}{' ' + reason if reason else ''}: {message}" if message else f"HTTP {code}"
    hint = ""
    match code:
        case 401:
            text = (
                f"Kubernetes rejected OpsAgent's credentials ({detail}): the token or kubeconfig user is invalid or "
                "expired. Credentials are configuration (tools.kubernetes)."
            )
            hint = "Tell the user, and use other evidence."
        case 403:
            where = f" in namespace '{namespace}'" if namespace else ""
            text = (
                f"Kubernetes does not allow OpsAgent to {what} ({detail}). Its service account lacks the read-only "
                f"RBAC role{where} (the opsagent-read ClusterRole, deploy/k8s/clusterrole.yaml)."
            )
            hint = "Tell the user; other namespaces or tools may still work."
        case 404:
            text = f"Not found: {message or 'the server could not find the requested resource'} (trying to {what})."
        case 400:
            text = f"Kubernetes rejected the request to {what}: {message or detail}."
        case 429 | 500 | 502 | 503 | 504:
            text = f"The Kubernetes API server failed to {what} ({detail}). It may be overloaded or restarting."
            hint = "Try again once; if it keeps failing, use other evidence."
        case _:
            text = f"The Kubernetes API server answered {detail} when asked to {what}."
    return KubeApiError(text, code=code, reason=reason, hint=hint)


def _garbled(server: str, what: str, exc: Exception) -> KubeApiError:
    if isinstance(exc, JsonTooDeep):
        return KubeApiError(
            f"The Kubernetes API at {server} answered the request to {what} with {exc}, deeper than any "
            "Kubernetes object, so OpsAgent did not read it. Something between OpsAgent and the API server may be "
            "broken or hostile.",
            hint=TELL_AND_MOVE_ON,
            code=200,
            reason="TooDeep",
        )
    return KubeApiError(
        f"The server at {server} answered the request to {what} with something that is not a Kubernetes object "
        f"({exc}). tools.kubernetes may point at something other than an API server.",
        hint="Tell the user.",
        code=200,
        reason="Garbled",
    )


def _credentials_failed(exc: ConfigError) -> KubeApiError:
    return KubeApiError(
        f"Could not obtain Kubernetes credentials ({exc}): the kubeconfig's token file or exec plugin failed, "
        "which is configuration.",
        hint="Tell the user, and use other evidence meanwhile.",
        code=0,
        reason="Credentials",
    )
