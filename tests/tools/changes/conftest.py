"""The change timeline's world: each source's backend with changes dated from the session Prometheus' anchor, so one
timeline merges them all: a cluster on the fake API server, a real git clone, a fake GitHub, the real Prometheus."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel import Tool
from opsagent_tools.changes import ChangesSettings
from opsagent_tools.metrics import MetricsSettings
from opsagent_tools.repos import RepoSettings
from opsagent_tools.toolset import ToolsSettings, build_tools
from samples.change_history import PAYMENTS, TOKEN, payment_history, rollout_objects
from samples.git_repos import make_release_history
from testkit.fakes.github_api import GitHubHistory
from testkit.fakes.kube_api import FakeKubeApi
from testkit.fakes.model_server import FakeModelServer
from testkit.servers.prometheus import PrometheusServer
from worlds.kube_tools import settings_for


@pytest.fixture
async def cluster(prometheus: PrometheusServer):
    async with FakeKubeApi(rollout_objects(prometheus.anchor), now=prometheus.anchor) as server:
        yield server


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory, prometheus: PrometheusServer) -> Path:
    return make_release_history(tmp_path_factory.mktemp("changes"), prometheus.anchor)


@pytest.fixture
def github(server: FakeModelServer, prometheus: PrometheusServer, monkeypatch: pytest.MonkeyPatch) -> FakeModelServer:
    """The fake GitHub answering for acme/payment-service; the token comes from the environment."""
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    server.respond = GitHubHistory(PAYMENTS, payment_history(prometheus.anchor))
    return server


@pytest.fixture
def settings(
    prometheus: PrometheusServer, cluster: FakeKubeApi, clone: Path, github: FakeModelServer, tmp_path: Path
) -> ToolsSettings:
    repositories = {"order-service": str(clone), "payment-service": {"github": PAYMENTS, "api_url": github.url}}
    return ToolsSettings(
        metrics=MetricsSettings(url=prometheus.url),
        repos=RepoSettings(repositories=repositories),
        kubernetes=settings_for(cluster, tmp_path, namespaces=("shop",)),
        changes=ChangesSettings(),
    )


@pytest.fixture
def tools(settings: ToolsSettings, prometheus: PrometheusServer) -> list[Tool]:
    """The registry `build_tools` makes of the settings, on the Prometheus anchor's clock."""
    return list(build_tools(settings, now=prometheus.now))
