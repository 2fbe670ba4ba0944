"""Each source of the change timeline alone, on its real backend: the sample cluster on the fake Kubernetes API, real
git clones, the fake GitHub (what was sent, too), the session's real Prometheus and recorded metrics files."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from fakes.github_api import GitHubHistory
from fakes.kube_api import FakeKubeApi
from fakes.model_server import FakeModelServer, Reply
from kernel import ToolFailure
from opsagent_tools.changes.prometheus import AlertChanges, VersionChanges, grid_step, runs, selector
from opsagent_tools.changes.repos import GitHubChanges, RefChanges, service_names
from opsagent_tools.changes.rollouts import RolloutChanges
from opsagent_tools.changes.settings import DEFAULT_DEPLOYMENT_LABELS, ChangesSettings
from opsagent_tools.changes.timeline import ChangeQuery, SourceResult
from opsagent_tools.kubernetes import KubeApi
from opsagent_tools.links import LinkSettings
from opsagent_tools.metrics.files import FileMetricsClient, write_series
from opsagent_tools.metrics.links import MetricLinks
from opsagent_tools.metrics.prometheus import PrometheusClient
from opsagent_tools.repos.git import GitRepo
from opsagent_tools.repos.github import GitHubRepo
from samples.change_history import PAYMENTS, TOKEN, payment_history
from samples.git_repos import make_release_history
from samples.kube_objects import NOW, shop_cluster
from servers.prometheus import PrometheusServer
from worlds.kube_tools import settings_for


def window(now, duration: timedelta, service: str | None = None) -> ChangeQuery:
    return ChangeQuery(service, now - duration, now)


def described(result: SourceResult, now) -> list[tuple[str, str]]:
    """(how long before now, text) per change, newest first."""
    return [(str(now - c.at), c.text) for c in sorted(result.changes, key=lambda c: c.at, reverse=True)]


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


# --- git --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_release_history(tmp_path_factory.mktemp("history"), NOW)


async def test_tags_and_merges_of_a_local_clone(clone):
    refs = RefChanges(GitRepo("order-service", clone), service_names("order-service", {}))
    hour = await refs.read(window(NOW, timedelta(hours=1)))
    assert [(ago, text.split(" on ")[0].split(": ")[0]) for ago, text in described(hour, NOW)] == [
        ("0:40:00", "tag v2.14.0 in order-service"),
        ("0:42:00", "merge into order-service"),
        ("0:45:00", "merge into order-service"),
    ]
    assert hour.changes[1].text.endswith('"Async receipts behind a flag (#415)"'), "a squash merge counts"
    assert all(change.link is None for change in hour.changes)
    days = await refs.read(window(NOW, timedelta(days=4)))
    texts = [text for _, text in described(days, NOW)]
    assert texts[3].endswith('"Merge pull request #398 from acme/retry-budget"')
    assert texts[4].startswith("tag v2.13.2 in order-service on ")
    assert texts[4].endswith('"Initial service"')
    assert not any("README" in text or "Size the pool" in text for text in texts), "plain and branch commits"


def test_a_repository_is_about_its_name_and_its_aliases():
    names = service_names("order-service", {"checkout": "order-service", "pay": "payment-service"})
    refs = RefChanges(GitRepo("order-service", "/nonexistent"), names)
    assert names == {"order-service", "checkout"}
    assert [refs.about(s) for s in ("Order-Service", "checkout", "pay", None)] == [True, True, False, True]


async def test_a_missing_clone_fails_with_what_to_fix(tmp_path):
    refs = RefChanges(GitRepo("order-service", tmp_path / "gone"), {"order-service"})
    with pytest.raises(ToolFailure, match=r"Repository order-service is not available: .*gone is not a directory"):
        await refs.read(window(NOW, timedelta(hours=1)))


# --- GitHub -----------------------------------------------------------------------------------


@pytest.fixture
def payments(server: FakeModelServer, monkeypatch: pytest.MonkeyPatch) -> GitHubRepo:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    server.respond = GitHubHistory(PAYMENTS, payment_history(NOW))
    return GitHubRepo("payment-service", PAYMENTS, api_url=server.url)


async def test_github_deployments_with_their_latest_status_and_published_releases(server, payments):
    result = await GitHubChanges(payments, {"payment-service"}).read(window(NOW, timedelta(hours=1)))
    assert described(result, NOW) == [
        ("0:52:00", "deployment of v1.9.0-rc1 (7b3d1f0) to staging by dana: success (canary of faster refunds)"),
        ("0:55:00", 'prerelease v1.9.0-rc1 "Faster refunds (rc1)" published by dana'),
    ]
    assert result.changes[0].link == "https://github.com/acme/payment-service/actions/runs/8812"
    sent = {r.path: r for r in server.requests}
    assert set(sent) == {f"/repos/{PAYMENTS}/{p}" for p in ("deployments", "deployments/51/statuses", "releases")}
    assert sent[f"/repos/{PAYMENTS}/deployments/51/statuses"].query == {"per_page": "1"}
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in server.requests)
    assert all(r.headers["x-github-api-version"] == "2022-11-28" for r in server.requests)


async def test_github_deployments_to_other_environments_are_left_out(server, payments):
    production = GitHubChanges(payments, {"payment-service"}, environments=["production"])
    result = await production.read(window(NOW, timedelta(days=3)))
    assert [text for _, text in described(result, NOW)] == [
        'prerelease v1.9.0-rc1 "Faster refunds (rc1)" published by dana',
        "deployment of v1.8.3 (aaaaaaa) to production by deploy-bot: success",
        "release v1.8.3 published by dana",  # exactly 3 days ago: a window includes its start
    ]
    assert result.covered == f"deployments to production and releases of {PAYMENTS}"


async def test_github_tags_and_merges_ask_for_the_window(server, payments):
    refs = await payments.tags_and_merges(NOW - timedelta(hours=1), NOW)
    assert [(e.kind, e.name, e.commit, e.subject, str(NOW - e.at)) for e in refs.events] == [
        ("merge", "", "7b3d1f0", "Merge pull request #77 from acme/faster-refunds", "0:58:00"),
        ("tag", "v1.9.0-rc1", "7b3d1f0", "Merge pull request #77 from acme/faster-refunds", "0:58:00"),
    ]
    commits = next(r for r in server.requests if r.path.endswith("/commits"))
    assert commits.query == {"since": "2026-11-30T04:40:00Z", "until": "2026-11-30T05:40:00Z", "per_page": "100"}
    assert refs.events[1].url == f"{server.url}/acme/payment-service/tree/v1.9.0-rc1"


async def test_github_enterprise_links_point_at_its_web_host():
    enterprise = GitHubRepo("payment-service", PAYMENTS, api_url="https://ghe.example.com/api/v3")
    dotcom = GitHubRepo("payment-service", PAYMENTS)
    assert (enterprise.api.web_url, dotcom.api.web_url) == (
        f"https://ghe.example.com/{PAYMENTS}",
        f"https://github.com/{PAYMENTS}",
    )


async def test_a_github_refusal_fails_the_source_with_advice(server, payments):
    server.respond = GitHubHistory(PAYMENTS, {"/deployments": Reply({"message": "Must have admin rights"}, 403)})
    with pytest.raises(ToolFailure, match=r"GitHub refused access to acme/payment-service \(403: Must have admin"):
        await GitHubChanges(payments, {"payment-service"}).read(window(NOW, timedelta(hours=1)))


# --- Prometheus -------------------------------------------------------------------------------


def versions(client, **overrides) -> VersionChanges:
    options = {"metric": ".+_build_info", "version_label": "version", "service_label": "service", "links": None}
    return VersionChanges(client, **(options | overrides))


async def test_a_new_version_label_is_a_change(prometheus: PrometheusServer):
    client = PrometheusClient(base_url=prometheus.url)
    now = prometheus.anchor
    hour = await versions(client).read(window(now, timedelta(hours=1)))
    assert described(hour, now) == [("0:12:00", "order-service version v2.13.2 → v2.14.0 (app_build_info)")]
    assert hour.covered == '{__name__=~".+_build_info"}: versions of 3 services'
    two = await versions(client, metric="app_build_info").read(window(now, timedelta(hours=2), "inventory-service"))
    assert described(two, now) == [("1:30:00", "inventory-service version v3.1.0 → v3.2.0 (app_build_info)")]
    assert two.covered == 'app_build_info{service="inventory-service"}: versions of 1 service'


async def test_versions_without_the_label_or_the_metric_read_as_nothing(prometheus: PrometheusServer):
    client = PrometheusClient(base_url=prometheus.url)
    now = prometheus.anchor
    unlabelled = await versions(client, version_label="release").read(window(now, timedelta(hours=1)))
    assert (unlabelled.changes, unlabelled.covered) == ([], '{__name__=~".+_build_info"}: versions of 0 services')
    absent = await versions(client, metric="nope_build_info").read(window(now, timedelta(hours=1)))
    assert absent.changes == []


async def test_a_rollback_to_an_earlier_version_is_a_change_too(tmp_path):
    def every_15s(start_s: int, stop_s: int) -> list[tuple[float, float]]:
        return [(NOW.timestamp() - t, 1.0) for t in range(start_s, stop_s, -15)]

    old = every_15s(3600, 1200) + every_15s(600, -15)  # rolled back 10 minutes ago
    new = every_15s(1200, 600)  # the replaced version lingers 5 minutes in Prometheus' lookback: a run still
    write_series(tmp_path / "m.jsonl", [
        ("checkout_build_info", {"service": "checkout", "version": "v3.8.0"}, old),
        ("checkout_build_info", {"service": "checkout", "version": "v3.9.0"}, new),
    ])  # fmt: skip
    recorded = await versions(FileMetricsClient(tmp_path / "m.jsonl")).read(window(NOW, timedelta(hours=1)))
    assert described(recorded, NOW) == [
        ("0:10:00", "checkout version v3.9.0 → v3.8.0 (checkout_build_info)"),
        ("0:20:00", "checkout version v3.8.0 → v3.9.0 (checkout_build_info)"),
    ]


async def test_alerts_that_fired_in_the_window(prometheus: PrometheusServer):
    client = PrometheusClient(base_url=prometheus.url)
    now = prometheus.anchor
    alerts = AlertChanges(client, "service", MetricLinks(LinkSettings(), f"{prometheus.url}/"))
    result = await alerts.read(window(now, timedelta(hours=1)))
    assert described(result, now) == [
        ("0:08:00", 'OrderService5xxBurnRate{service="order-service",severity="page"} started firing, still firing'),
        (
            "0:50:00",
            'PaymentServiceLatencyHigh{service="payment-service",severity="warning"} started firing, '
            "last seen firing t-35m",
        ),
    ]
    moment = now.strftime("%Y-%m-%d%%20%H%%3A%M%%3A%S")
    assert result.changes[0].link == (
        f"{prometheus.url}/graph?g0.expr=ALERTS%7Balertname%3D%22OrderService5xxBurnRate%22%7D&g0.tab=0"
        f"&g0.range_input=1h&g0.end_input={moment}&g0.moment_input={moment}"
    )
    pending_only = await alerts.read(ChangeQuery(None, now - timedelta(minutes=10), now - timedelta(minutes=9)))
    assert pending_only.changes == [], "a pending alert has not fired"


def test_the_query_grid_and_its_runs():
    assert [grid_step(s) for s in (300, 3600, 7200, 86400, 7 * 86400)] == [15, 15, 30, 600, 3600]
    assert runs([0, 15, 30, 90, 105], 15) == [(0, 30), (90, 105)]
    assert selector("app_build_info", {"service": 'we"ird'}) == 'app_build_info{service="we\\"ird"}'
    assert selector(".+_build_info", {}) == '{__name__=~".+_build_info"}'


def test_settings_refuse_what_would_not_be_a_query():
    with pytest.raises(ValueError, match="not a regular expression"):
        ChangesSettings(build_info_metric="app_(build")
    with pytest.raises(ValueError, match="without quotes or backslashes"):
        ChangesSettings(build_info_metric='x"}')
    with pytest.raises(ValueError, match="is not a Prometheus label name"):
        ChangesSettings(version_label="app.version")
