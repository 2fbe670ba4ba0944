"""The demo's recorded cluster served on 127.0.0.1 behind a fresh bearer token, and the kubeconfig that reaches it,
so the Kubernetes tools (and `opsagent tools call k8s_pods`) read it as they read a real cluster."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from types import TracebackType
from typing import Self

import yaml
from aiohttp import web

from opsagent_tools.demo_cluster.api import ClusterApi, status
from opsagent_tools.demo_cluster.incident import NAMESPACE, read_cluster
from opsagent_tools.kubernetes import KubernetesSettings

CONTEXT = "opsagent-demo"
KUBECONFIG = "kubeconfig"
"""Where, beside the recording, the kubeconfig that reaches the served cluster is written."""


class ServedCluster:
    """`async with ServedCluster(recording, kubeconfig)`: the cluster `recording` holds (`write_cluster`) answers at
    `url` while entered, and `kubeconfig` is (re)written to reach it. `port` 0 takes a free one."""

    def __init__(self, recording: Path, kubeconfig: Path, *, port: int = 0) -> None:
        self.recording, self.kubeconfig, self.port = recording, kubeconfig, port
        self.url = ""
        self._token = secrets.token_hex(16)
        self._runner: web.AppRunner | None = None
        self._api: ClusterApi | None = None

    @property
    def settings(self) -> KubernetesSettings:
        """`[tools.kubernetes]` for this cluster: its namespace, through the kubeconfig."""
        return KubernetesSettings(namespaces=(NAMESPACE,), kubeconfig=self.kubeconfig)

    async def __aenter__(self) -> Self:
        now, objects, logs = read_cluster(self.recording)
        self._api = ClusterApi(objects, now=now, logs=logs)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._answer)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        except OSError as exc:
            await self._runner.cleanup()
            raise OSError(f"cannot serve the demo's cluster on 127.0.0.1:{self.port}: {exc.strerror or exc}") from None
        self.port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._write_kubeconfig()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        assert self._api is not None  # routes exist only once entered
        if request.headers.get("Authorization") != f"Bearer {self._token}":
            return status(401, "Unauthorized", "Unauthorized")
        return await self._api.answer(request)

    def _write_kubeconfig(self) -> None:
        """The kubeconfig, readable by its owner only (it holds the token), replaced whole: a reader never sees half."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": CONTEXT,
            "clusters": [{"name": CONTEXT, "cluster": {"server": self.url}}],
            "users": [{"name": CONTEXT, "user": {"token": self._token}}],
            "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": NAMESPACE}}],
        }
        text = "# The demo's cluster, served by `opsagent demo` on this machine only.\n" + yaml.safe_dump(config)
        self.kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        written = self.kubeconfig.with_name(f".{self.kubeconfig.name}.{os.getpid()}")
        written.write_text(text, encoding="utf-8")
        written.chmod(0o600)
        written.replace(self.kubeconfig)
