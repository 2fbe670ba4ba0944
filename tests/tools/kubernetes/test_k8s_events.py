"""k8s_events against the fake API server: filtering by object, reason, type and time; grouping; partial RBAC."""

from __future__ import annotations

from samples.kube_objects import NOW, event
from testkit.fakes.kube_api import FakeKubeApi
from worlds.kube_tools import call, error_of, text_of, tools_for


async def test_namespace_events_are_grouped_warnings_first_with_counts_and_times(tools):
    text = await text_of(tools, "k8s_events")
    lines = text.splitlines()
    assert lines[0] == "events in shop, since t-1h: 60 in 6 groups (58 Warning)"
    assert lines[1].startswith("  Warning BackOff pod/checkout-7d9f8c6b5-x2x9k ×23, 38m..1m ago: Back-off restarting")
    assert [line.split()[0] for line in lines[1:]] == ["Warning"] * 4 + ["Normal"] * 2
    assert "cart-db-0" not in text, "an event last seen 190m ago is outside the hour"


async def test_the_newer_event_shape_with_a_series_is_counted(tools):
    text = await text_of(tools, "k8s_events", reason="FailedScheduling")
    assert "Warning FailedScheduling pod/search-api-5f9c7d8b4-abcde ×12, 12m..2m ago: 0/2 nodes are available" in text


async def test_reasons_match_as_substrings_across_every_allowed_namespace(tools, cluster):
    text = await text_of(tools, "k8s_events", namespace="", reason="oom,backoff")
    assert text.startswith("events in shop, default, reason ~ oom|backoff, since t-1h: 49 in 3 groups (49 Warning)")
    assert "Warning OOMKilling node/node-a ×7, 30m..2m ago" in text
    assert {r.path for r in cluster.requests} == {"/api/v1/namespaces/shop/events", "/api/v1/namespaces/default/events"}


async def test_an_object_is_filtered_on_the_server_and_a_name_prefix_here(tools, cluster):
    exact = await text_of(tools, "k8s_events", object="deployment/checkout")
    assert cluster.requests[-1].query["fieldSelector"] == "involvedObject.kind=Deployment,involvedObject.name=checkout"
    assert "2 in 2 groups (0 Warning)" in exact
    prefix = await text_of(tools, "k8s_events", object="checkout", type="Warning")
    assert "fieldSelector" not in cluster.requests[-1].query
    assert "for names starting with 'checkout', type Warning, since t-1h: 46 in 3 groups (46 Warning)" in prefix
    assert "search-api" not in prefix


async def test_a_wider_window_reaches_older_events_and_an_empty_answer_says_why(tools):
    older = await text_of(tools, "k8s_events", object="cart-db-0", since="4h")
    assert "Normal Pulled pod/cart-db-0 ×1, 3h10m ago" in older
    empty = await text_of(tools, "k8s_events", reason="Evicted")
    assert "No events match. Events expire an hour after they last happened" in empty
    assert (
        "Reasons in this window without the filters: BackOff ×42, FailedScheduling ×12, Unhealthy ×4, ScalingReplicaSet ×2."
        in empty
    )


async def test_one_forbidden_namespace_is_a_note_and_all_forbidden_is_the_error(tools, cluster):
    cluster.forbid("events", "default")
    text = await text_of(tools, "k8s_events", namespace="")
    assert "Warning BackOff pod/checkout-7d9f8c6b5-x2x9k" in text
    assert "note: Kubernetes does not allow OpsAgent to list events in namespace 'default'" in text
    cluster.forbid("events")
    error = await error_of(tools, "k8s_events", namespace="")
    assert "does not allow OpsAgent to list events" in error


async def test_bad_filters_say_what_is_accepted(tools):
    assert "unknown object kind 'widget'. Use one of" in await error_of(tools, "k8s_events", object="widget/x")
    assert "Cannot read the time 'yesterday'" in await error_of(tools, "k8s_events", since="yesterday")
    assert "namespace 'kube-system' is not allowed" in await error_of(tools, "k8s_events", namespace="kube-system")


async def test_a_secret_in_an_event_message_is_redacted_before_the_message_is_cut(tmp_path):
    """An event message is cut at 240 characters; an AWS key straddling the cut, redacted only after it, would leave
    its first 15 characters, which no redactor recognises any more."""
    key = "AKIAIOSFODNN7EXAMPLE"
    message = "x" * 224 + f" key {key} was rejected by the bucket policy"
    assert message.index(key) < 239 < message.index(key) + len(key), "the cut falls inside the key"
    objects = [event("e1", "Pod", "uploader-0", "FailedMount", message, first=5, last=1)]
    async with FakeKubeApi(objects, now=NOW) as server:
        tools = tools_for(server, tmp_path)
        for tool, args in (("k8s_events", {}), ("k8s_describe", {"kind": "pod", "name": "uploader-0"})):
            text = await call(tools, tool, **args)
            assert key[:8] not in text.text, f"{tool} showed part of the key"
            if tool == "k8s_events":
                assert " key [REDACTED:" in text.text
