"""Changes for the change timeline's tests, dated relative to a given now: a cluster's rollouts and a GitHub
repository's history (deployments and statuses, releases, commits, tags) in the shapes the fakes serve."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from opsagent_tools.changes import ChangeQuery, SourceResult
from samples.kube_objects import deployment, replica_set
from testkit.fakes.github_api import commit_json, deployment_json, deployment_status_json, release_json, tag_json
from testkit.fakes.model_server import Reply

PAYMENTS = "acme/payment-service"
MERGE_SHA = "7b3d1f0" + "0" * 33
TOKEN = "ghp_changes0123456789abcdefABCDEF012345"
ORDER_IMAGE = "registry.example.com/order-service:{}"


def rollout_objects(now: datetime) -> list[dict[str, Any]]:
    """order-service rolled out revision 7 (v2.13.2 → v2.14.0) 12 minutes before `now`; payment-service has not
    rolled out for five days; checkout-api has no ReplicaSets at all."""
    return [
        deployment("order-service", 7, ORDER_IMAGE.format("v2.14.0"), "512Mi", now=now),
        replica_set("5b8c7d6f4", 6, ORDER_IMAGE.format("v2.13.2"), "512Mi", 3 * 24 * 60, 0, 0, "deploy v2.13.2",
                    app="order-service", now=now),
        replica_set("7d9f8c6b5", 7, ORDER_IMAGE.format("v2.14.0"), "512Mi", 12, 3, 3, "deploy v2.14.0",
                    app="order-service", now=now),
        deployment("payment-service", 3, "registry.example.com/payment-service:v1.8.3", "256Mi", now=now),
        replica_set("6c5b4a3f2", 3, "registry.example.com/payment-service:v1.8.3", "256Mi", 5 * 24 * 60, 2, 2,
                    app="payment-service", now=now),
        deployment("checkout-api", 1, "v1.2.0", "128Mi", now=now),
    ]  # fmt: skip


def payment_history(now: datetime) -> dict[str, Reply | list[Any]]:
    """acme/payment-service on GitHub: a staging deployment 52 minutes ago (its latest status: success) and a
    production one two days ago; a prerelease 55 minutes ago, a draft, an old release; a merge 58 minutes ago
    tagged v1.9.0-rc1, and a plain commit."""

    def minutes(n: float) -> datetime:
        return now - timedelta(minutes=n)

    return {
        "/deployments": [
            deployment_json(PAYMENTS, 51, sha=MERGE_SHA, ref="v1.9.0-rc1", environment="staging", created=minutes(52),
                            creator="dana", description="canary of faster refunds"),
            deployment_json(PAYMENTS, 50, sha="a" * 40, ref="v1.8.3", environment="production",
                            created=minutes(2 * 24 * 60), creator="deploy-bot"),
        ],
        "/deployments/51/statuses": [
            deployment_status_json(PAYMENTS, 51, 902, state="success", created=minutes(51),
                                   log_url="https://github.com/acme/payment-service/actions/runs/8812"),
            deployment_status_json(PAYMENTS, 51, 901, state="in_progress", created=minutes(52)),
        ],
        "/deployments/50/statuses": [deployment_status_json(PAYMENTS, 50, 900, state="success", created=minutes(2879))],
        "/releases": [
            release_json(PAYMENTS, 12, tag="v1.9.0", name="v1.9.0", published=None, author="dana", draft=True),
            release_json(PAYMENTS, 11, tag="v1.9.0-rc1", name="Faster refunds (rc1)", published=minutes(55),
                         author="dana", prerelease=True),
            release_json(PAYMENTS, 10, tag="v1.8.3", name="v1.8.3", published=minutes(3 * 24 * 60), author="dana"),
        ],
        "/commits": [
            commit_json(PAYMENTS, "c0ffee1" + "0" * 33, message="Fix a typo in the README", committed=minutes(20)),
            commit_json(PAYMENTS, MERGE_SHA, message="Merge pull request #77 from acme/faster-refunds\n\nFaster.",
                        committed=minutes(58), parents=2),
        ],
        "/tags": [tag_json(PAYMENTS, "v1.9.0-rc1", MERGE_SHA), tag_json(PAYMENTS, "v1.8.3", "a" * 40)],
    }  # fmt: skip


def window(now: datetime, duration: timedelta, service: str | None = None) -> ChangeQuery:
    """The window of `duration` that ends at `now`, for `service` (None: every service)."""
    return ChangeQuery(service, now - duration, now)


def described(result: SourceResult, now: datetime) -> list[tuple[str, str]]:
    """(how long before now, text) per change, newest first."""
    return [(str(now - c.at), c.text) for c in sorted(result.changes, key=lambda c: c.at, reverse=True)]
