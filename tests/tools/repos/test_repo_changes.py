"""The change timeline's repository sources: tags and merges of a clone or a GitHub repository, and GitHub's
deployments and releases."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from kernel import ToolFailure
from opsagent_tools.repos.changes import GitHubChanges, RefChanges, service_names
from opsagent_tools.repos.git import GitRepo
from opsagent_tools.repos.github import GitHubRepo
from samples.change_history import PAYMENTS, TOKEN, described, payment_history, window
from samples.git_repos import make_release_history
from samples.kube_objects import NOW
from testkit.fakes.github_api import GitHubHistory
from testkit.fakes.model_server import FakeModelServer, Reply


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
