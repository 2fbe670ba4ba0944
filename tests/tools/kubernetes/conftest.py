"""The sample cluster on a fake API server, and the Kubernetes tools pointed at it through a kubeconfig file."""

from __future__ import annotations

import pytest

from samples.kube_objects import NOW, shop_cluster
from testkit.fakes.kube_api import FakeKubeApi
from worlds.kube_tools import tools_for


@pytest.fixture
async def cluster():
    objects, logs = shop_cluster()
    async with FakeKubeApi(objects, now=NOW, logs=logs) as server:
        yield server


@pytest.fixture
def tools(cluster, tmp_path):
    return tools_for(cluster, tmp_path)
