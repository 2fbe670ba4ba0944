"""The Kubernetes family: one API client for the cluster the settings name (its TLS and credentials set up once),
shared by the `k8s_*` tools, `discover`'s namespaces and workloads, the timeline's rollouts and `opsagent check`.

It holds no connection between calls: each tool call opens its own session, so there is nothing to enter or close.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import cached_property

from kernel import Tool
from opsagent_tools.changes import ChangeSource, ChangesSettings
from opsagent_tools.check_result import CheckResult, probe
from opsagent_tools.discovery import DiscoverySettings, DiscoverySource
from opsagent_tools.family import ToolFamily
from opsagent_tools.kubernetes.api import KubeApi
from opsagent_tools.kubernetes.changes import change_sources
from opsagent_tools.kubernetes.check import check_kubernetes
from opsagent_tools.kubernetes.discovery import KubernetesDiscovery
from opsagent_tools.kubernetes.settings import KubernetesSettings
from opsagent_tools.kubernetes.tools import kubernetes_tools


class KubernetesFamily(ToolFamily):
    """`[tools.kubernetes]`: the kubeconfig is found through `environ`; `api` replaces the cluster the settings name
    (the evaluation's, which is never called); the tools read "now" from `now`."""

    keywords = (
        "kubernetes",
        "k8s",
        "pods",
        "containers",
        "namespace",
        "crashloop",
        "oomkilled",
        "restarting",
        "restarts",
        "nodes",
        "evicted",
        "cluster",
        "flapping",
    )

    def __init__(
        self,
        settings: KubernetesSettings,
        *,
        environ: Mapping[str, str],
        now: Callable[[], datetime],
        api: KubeApi | None = None,
    ) -> None:
        self.settings, self.environ, self.now, self._given = settings, environ, now, api

    @cached_property
    def api(self) -> KubeApi:
        """The cluster's client, set up once; a ValueError says what to fix in the kubeconfig or the settings."""
        return self._given if self._given is not None else KubeApi.from_settings(self.settings, self.environ)

    def tools(self) -> Sequence[Tool]:
        return kubernetes_tools(self.settings, api=self.api, now=self.now)

    def discovery(self, settings: DiscoverySettings) -> DiscoverySource:
        return KubernetesDiscovery(self.api)

    def change_sources(self, settings: ChangesSettings) -> Sequence[ChangeSource]:
        return change_sources(settings, self.api)

    async def check(self) -> list[CheckResult]:
        return [await probe("kubernetes", lambda: check_kubernetes(self.api))]
