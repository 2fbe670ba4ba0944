"""recent_changes as the model calls it, through the kernel's dispatch: every source merged newest first, each failing
alone, the window's bounds, service filtering, and what an empty timeline says.

The world (tests/tools/changes/conftest.py) dates every change from the session Prometheus' anchor.
"""

from __future__ import annotations

import re

from opsagent_tools.changes import ChangesSettings
from opsagent_tools.toolset import build_tools
from samples.change_history import PAYMENTS, payment_history
from testkit.fakes.github_api import GitHubHistory
from testkit.fakes.model_server import Reply
from worlds.dispatch import dispatch_call
from worlds.kube_tools import error_of, text_of

SHA = re.compile(r"\b[0-9a-f]{7}\b")
"""The local clone's commits are dated from the anchor, so their SHAs differ per session."""


def entries(text: str) -> list[str]:
    """The timeline's change lines without their links, SHAs written as <sha>."""
    return [SHA.sub("<sha>", line.split(" · http")[0]) for line in text.splitlines() if re.match(r"(t-\S+|now) ", line)]


async def test_every_source_is_merged_newest_first(tools):
    text = await text_of(tools, "recent_changes", window="1h")
    lines = text.splitlines()
    assert lines[0] == (
        "changes across all services in the last 1h, newest first (t-12m is 12 minutes ago): 11 from 6 of 6 sources"
    )
    assert entries(text) == [
        't-8m alert: OrderService5xxBurnRate{service="order-service",severity="page"} started firing, still firing',
        "t-12m prometheus: order-service version v2.13.2 → v2.14.0 (app_build_info)",
        "t-12m kubernetes: deployment/order-service in shop: revision 7 (order-service-7d9f8c6b5) rolled out: "
        "app image registry.example.com/order-service:v2.13.2 → registry.example.com/order-service:v2.14.0"
        " · change-cause: deploy v2.14.0",
        't-40m git: tag v2.14.0 in order-service on <sha> "release 2.14.0"',
        't-42m git: merge into order-service: <sha> "Async receipts behind a flag (#415)"',
        't-45m git: merge into order-service: <sha> "Merge pull request #412 from acme/pool-for-pgbouncer"',
        't-50m alert: PaymentServiceLatencyHigh{service="payment-service",severity="warning"} started firing, '
        "last seen firing t-35m",
        "t-52m github: deployment of v1.9.0-rc1 (<sha>) to staging by dana: success (canary of faster refunds)",
        't-55m github: prerelease v1.9.0-rc1 "Faster refunds (rc1)" published by dana',
        't-58m git: merge into payment-service: <sha> "Merge pull request #77 from acme/faster-refunds"',
        't-58m git: tag v1.9.0-rc1 in payment-service on <sha> "Merge pull request #77 from acme/faster-refunds"',
    ]
    assert lines[-1].startswith('checked: prometheus alerts (ALERTS{alertstate="firing"}: 2 alert series); ')
    assert "kubernetes (3 deployments in shop)" in lines[-1]


async def test_entries_carry_their_source_links(tools, prometheus):
    text = await text_of(tools, "recent_changes", window="1h")
    links = dict(
        line.split(" · ", 1)[::-1] for line in text.splitlines() if " · http" in line and "change-cause" not in line
    )
    versions = f"{prometheus.url}/graph?g0.expr=%7B__name__%3D~%22.%2B_build_info%22%7D&g0.tab=0&g0.range_input=1h&"
    assert any(link.startswith(versions) for link in links)
    assert "https://github.com/acme/payment-service/actions/runs/8812" in links, "a deployment links to its log"
    assert "https://github.com/acme/payment-service/releases/tag/v1.9.0-rc1" in links
    assert "https://github.com/acme/payment-service/commit/7b3d1f0" + "0" * 33 in links
    assert not any("order-service:" in line and "git" in line for line in links.values()), "a local clone has no link"


async def test_the_window_bounds_what_is_shown(tools):
    half_hour = entries(await text_of(tools, "recent_changes", window="30m"))
    assert [line.split(":")[0] for line in half_hour] == ["t-8m alert", "t-12m prometheus", "t-12m kubernetes"]
    two_hours = entries(await text_of(tools, "recent_changes", window="2h"))
    assert "t-1h30m prometheus: inventory-service version v3.1.0 → v3.2.0 (app_build_info)" in two_hours
    assert not any("#398" in line for line in two_hours), "merged 2h30m ago"
    three_hours = entries(await text_of(tools, "recent_changes", window="3h"))
    assert any(line.startswith("t-2h30m git: merge into order-service") and "#398" in line for line in three_hours)
    assert not any("deployment of v1.8.3" in line for line in three_hours), "its production deploy was 2 days ago"
    assert "t-2h prometheus: payment-service first reports version v1.8.3 (app_build_info)" in three_hours


async def test_a_service_sees_only_its_own_changes(tools):
    text = await text_of(tools, "recent_changes", service="order-service", window="1h")
    assert [line.split(":")[0] for line in entries(text)] == [
        "t-8m alert", "t-12m prometheus", "t-12m kubernetes", "t-40m git", "t-42m git", "t-45m git",
    ]  # fmt: skip
    assert entries(text)[0] == 't-8m alert: OrderService5xxBurnRate{severity="page"} started firing, still firing'
    lines = text.splitlines()
    assert lines[0].startswith("changes for order-service in the last 1h")
    assert '{__name__=~".+_build_info",service="order-service"}: versions of 1 service' in lines[-2]
    assert "kubernetes (1 deployment matching order-service in shop)" in lines[-2]
    assert lines[-1] == "not about order-service: github acme/payment-service, git payment-service"


async def test_a_repository_alias_counts_as_its_service(settings, prometheus):
    settings.repos.services["payments"] = "payment-service"
    tools = list(build_tools(settings, now=prometheus.now))
    text = await text_of(tools, "recent_changes", service="payments", window="1h")
    assert [line.split(":")[0] for line in entries(text)] == ["t-52m github", "t-55m github", "t-58m git", "t-58m git"]
    assert text.splitlines()[-1] == "not about payments: git order-service"


async def test_a_failing_source_is_one_line_and_the_others_still_answer(tools, cluster, github, prometheus):
    cluster.forbid("deployments")
    history = payment_history(prometheus.anchor) | {"/releases": Reply({"message": "Server Error"}, status=502)}
    github.respond = GitHubHistory(PAYMENTS, history)
    text = await text_of(tools, "recent_changes", window="1h")
    lines = text.splitlines()
    assert lines[0].endswith(": 8 from 4 of 6 sources")
    assert lines[1:3] == [
        "kubernetes: not read: 403 on namespace shop: OpsAgent may not list deployments or replicasets there; "
        "bind the read-only ClusterRole (deploy/k8s/clusterrole.yaml) in it",
        "github acme/payment-service: not read: GitHub returned 502 (Server Error).",
    ]
    assert "t-12m prometheus: order-service version v2.13.2 → v2.14.0 (app_build_info)" in entries(text)
    assert not any(" kubernetes: " in line or " github: " in line for line in entries(text))


async def test_a_slow_source_is_cut_at_its_budget(settings, cluster, prometheus):
    cluster.delay_s = 30
    tools = list(build_tools(settings.model_copy(update={"changes": ChangesSettings(timeout_s=1)}), now=prometheus.now))
    tool = next(t for t in tools if t.name == "recent_changes")
    assert tool.timeout == 6
    text = await text_of(tools, "recent_changes", service="order-service", window="1h")
    assert (
        "kubernetes: not read: no answer within 1 s; the other sources are shown, ask again to retry this one" in text
    )
    assert "t-12m prometheus: order-service version v2.13.2 → v2.14.0 (app_build_info)" in entries(text)


async def test_an_empty_timeline_says_what_it_means(tools):
    text = await text_of(tools, "recent_changes", service="inventory-service", window="30m")
    lines = text.splitlines()
    assert lines[0] == (
        "changes for inventory-service in the last 30m, newest first (t-12m is 12 minutes ago): 0 from 3 of 3 sources"
    )
    assert lines[1] == (
        "No changes for inventory-service in the last 30m in any source. If the symptom began earlier, widen the "
        'window (window="6h"); otherwise the cause is probably not a change of inventory-service: call '
        "recent_changes without a service for its dependencies' changes, and look at load."
    )
    assert lines[-1] == (
        "not about inventory-service: git order-service, github acme/payment-service, git payment-service"
    )


async def test_an_empty_timeline_with_an_unread_source_says_it_is_partial(tools, cluster):
    cluster.forbid("replicasets")
    text = await text_of(tools, "recent_changes", service="payment-service", window="5m")
    assert "kubernetes: not read: 403 on namespace shop" in text
    assert (
        "No changes for payment-service in the last 5m in the sources that could be read (the others are unknown, "
        'not empty). If the symptom began earlier, widen the window (window="6h")'
    ) in text


async def test_an_alert_already_firing_when_the_window_begins_is_shown_at_its_start(tools):
    text = await text_of(tools, "recent_changes", service="order-service", window="5m")
    assert entries(text) == [
        't-5m alert: OrderService5xxBurnRate{severity="page"} was already firing when the window began, still firing'
    ]


async def test_a_bad_window_is_the_models_to_fix(tools):
    error = await error_of(tools, "recent_changes", window="yesterday")
    assert 'window "yesterday" is not a duration. Write it like 15m, 1h or 2h30m' in error


async def test_only_the_newest_changes_are_shown_and_the_rest_counted(settings, prometheus):
    short = settings.model_copy(update={"changes": ChangesSettings(max_entries=3)})
    text = await text_of(list(build_tools(short, now=prometheus.now)), "recent_changes", window="1h")
    assert [line.split(":")[0] for line in entries(text)] == ["t-8m alert", "t-12m prometheus", "t-12m kubernetes"]
    assert "… 8 older changes not shown: name a service or narrow the window to see them" in text.splitlines()


async def test_links_never_carry_the_metrics_urls_credentials(settings, prometheus):
    port = prometheus.url.rsplit(":", 1)[1]
    metrics = settings.metrics.model_copy(update={"url": f"http://opsagent:s3cr3t-pass@127.0.0.1:{port}"})
    tools = list(build_tools(settings.model_copy(update={"metrics": metrics}), now=prometheus.now))
    text = await text_of(tools, "recent_changes", service="order-service", window="1h")
    assert f" · http://127.0.0.1:{port}/graph?g0.expr=" in text
    assert "s3cr3t" not in text


async def test_a_garbled_answer_fails_only_its_source(tools, github, prometheus):
    history = payment_history(prometheus.anchor)
    history["/deployments"][0].pop("id")  # every deployment GitHub lists has one
    github.respond = GitHubHistory(PAYMENTS, history)
    text = await text_of(tools, "recent_changes", service="payment-service", window="1h")
    assert (
        "github acme/payment-service: not read: failed unexpectedly (KeyError: 'id'); the other sources are shown"
    ) in text.splitlines()
    assert 't-58m git: merge into payment-service: <sha> "Merge pull request #77 from acme/faster-refunds"' in entries(
        text
    )
    headline = (await dispatch_call(tools, "recent_changes", service="payment-service", window="1h")).headline
    assert headline.endswith(" · 1 of 5 sources not read"), headline
    assert len(headline) <= 120


async def test_people_see_the_count_the_latest_change_and_the_newest_links(tools, prometheus):
    result = await dispatch_call(tools, "recent_changes", window="1h")
    assert result.headline == (
        '11 changes · latest t-8m alert: OrderService5xxBurnRate{service="order-service",severity="page"} started '
        "firing, still…"
    ), "cut to 120 characters"
    assert [link.label for link in result.links] == ["alert", "versions", "alert"], "a local clone's have none"
    alert, versions, older = (link.url for link in result.links)
    assert alert.startswith(f"{prometheus.url}/graph?g0.expr=ALERTS%7Balertname%3D%22OrderService5xxBurnRate%22%7D")
    assert versions.startswith(f"{prometheus.url}/graph?g0.expr=%7B__name__%3D~%22.%2B_build_info%22%7D")
    assert "PaymentServiceLatencyHigh" in older
    assert all(link.url in result.text for link in result.links), "the links are the entries' own"


async def test_one_change_and_an_empty_timeline_say_so(tools):
    alert = await dispatch_call(tools, "recent_changes", service="order-service", window="10m")
    assert alert.headline == (
        '1 change · latest t-8m alert: OrderService5xxBurnRate{severity="page"} started firing, still firing'
    )
    quiet = await dispatch_call(tools, "recent_changes", service="inventory-service", window="30m")
    assert quiet.headline == "no changes in 30m"
    assert quiet.links == ()
