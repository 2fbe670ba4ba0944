"""The change timeline's Kubernetes source: each rollout in the window, diffed against the revision before."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from kernel import ToolFailure
from opsagent_tools.changes.settings import DEFAULT_DEPLOYMENT_LABELS
from opsagent_tools.kubernetes import KubeApi
from opsagent_tools.kubernetes.changes import RolloutChanges
from samples.change_history import described, window
from samples.kube_objects import NOW, shop_cluster
from testkit.fakes.kube_api import FakeKubeApi
from worlds.kube_tools import settings_for

# --- Kubernetes -------------------------------------------------------------------------------


@pytest.fixture
async def shop():
    objects, logs = shop_cluster()
    async with FakeKubeApi(objects, now=NOW, logs=logs) as server:
        yield server


def rollouts(server: FakeKubeApi, tmp_path: Path, **settings) -> RolloutChanges:
    return RolloutChanges(KubeApi.from_settings(settings_for(server, tmp_path, **settings)), DEFAULT_DEPLOYMENT_LABELS)


async def test_a_rollout_in_the_window_is_diffed_against_the_revision_before(shop, tmp_path):
    result = await rollouts(shop, tmp_path).read(window(NOW, timedelta(hours=1), "checkout"))
    assert described(result, NOW) == [
        (
            "0:42:00",
            "deployment/checkout in shop: revision 4 (checkout-7d9f8c6b5) rolled out: app memory limit 512Mi → 256Mi; "
            "app memory request 512Mi → 256Mi · change-cause: kubectl set resources deployment/checkout "
            "--limits=memory=256Mi",
        )
    ]
    assert result.covered == "1 deployment matching checkout in shop, default"
    assert result.problems == []
    assert {r.path for r in shop.requests} == {
        "/apis/apps/v1/namespaces/shop/deployments", "/apis/apps/v1/namespaces/shop/replicasets",
        "/apis/apps/v1/namespaces/default/deployments", "/apis/apps/v1/namespaces/default/replicasets",
    }  # fmt: skip


async def test_older_revisions_are_outside_a_short_window(shop, tmp_path):
    result = await rollouts(shop, tmp_path).read(window(NOW, timedelta(minutes=30)))
    assert result.changes == []
    assert result.covered == "2 deployments in shop, default"
    week = await rollouts(shop, tmp_path).read(window(NOW, timedelta(days=7)))
    assert [text.split(":")[1] for _, text in described(week, NOW)] == [
        " revision 4 (checkout-7d9f8c6b5) rolled out",
        " revision 3 (checkout-5d4c8b7f9) rolled out",
    ]
    assert (
        "app image registry.example.com/checkout:v3.7.4 → registry.example.com/checkout:v3.8.0" in week.changes[1].text
    )


async def test_a_rollback_is_dated_by_the_deployments_progress(shop, tmp_path):
    old = next(o for o in shop.objects if o["metadata"]["name"] == "checkout-6b7c5d8e2")
    old["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "5"
    checkout = next(o for o in shop.objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "checkout")
    checkout["status"]["conditions"][0].update(
        lastUpdateTime="2026-11-30T05:30:00Z", message='ReplicaSet "checkout-6b7c5d8e2" has progressed.'
    )
    result = await rollouts(shop, tmp_path).read(window(NOW, timedelta(hours=1), "checkout"))
    assert described(result, NOW)[0] == (
        "0:10:00",
        "deployment/checkout in shop: rolled back to revision 5 (checkout-6b7c5d8e2, first made 9d ago): "
        "app image registry.example.com/checkout:v3.8.0 → registry.example.com/checkout:v3.7.4; "
        "app memory limit 256Mi → 512Mi; app memory request 256Mi → 512Mi",
    )


async def test_deployments_match_a_service_by_name_or_label(shop, tmp_path):
    checkout = next(o for o in shop.objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "checkout")
    checkout["metadata"]["labels"] = {"app.kubernetes.io/name": "storefront-checkout"}
    by_label = await rollouts(shop, tmp_path).read(window(NOW, timedelta(hours=1), "storefront-checkout"))
    assert len(by_label.changes) == 1
    assert by_label.covered == "1 deployment matching storefront-checkout in shop, default"
    nobody = await rollouts(shop, tmp_path).read(window(NOW, timedelta(hours=1), "checkout-ap"))
    assert (nobody.changes, nobody.covered) == ([], "0 deployments matching checkout-ap in shop, default")


async def test_a_refused_namespace_is_one_problem_and_the_rest_is_read(shop, tmp_path):
    shop.forbid("replicasets", "default")
    result = await rollouts(shop, tmp_path).read(window(NOW, timedelta(hours=1)))
    assert len(result.changes) == 1
    assert result.problems == [
        "403 on namespace default: OpsAgent may not list deployments or replicasets there; bind the read-only "
        "ClusterRole (deploy/k8s/clusterrole.yaml) in it"
    ]
    shop.forbid("deployments", "shop")
    with pytest.raises(ToolFailure, match=r"^403 on namespace shop: .*; 403 on namespace default: "):
        await rollouts(shop, tmp_path).read(window(NOW, timedelta(hours=1)))


async def test_a_truncated_replicaset_list_is_said(shop, tmp_path):
    result = await rollouts(shop, tmp_path, list_limit=2).read(window(NOW, timedelta(hours=1)))
    assert result.problems == [
        "more ReplicaSets in shop than tools.kubernetes.list_limit: some rollouts may be missing"
    ]
