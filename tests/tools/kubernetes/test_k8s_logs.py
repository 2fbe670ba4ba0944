"""k8s_logs against the fake API server: previous logs of a crash loop, the grouping and truncation of search_logs,
filters, and what the kubelet refuses."""

from __future__ import annotations

import base64
import random
from datetime import timedelta

from opsagent_tools.logs.search import LINE_CHARS
from samples.kube_objects import NOW
from testkit.fakes.kube_api import LogLines
from worlds.kube_tools import error_of, text_of, tools_for

CRASHED = "checkout-7d9f8c6b5-x2x9k"
HEALTHY = "checkout-7d9f8c6b5-m2kxj"


async def test_the_previous_run_of_a_crash_looping_pod_shows_why_it_died(tools, cluster):
    text = await text_of(tools, "k8s_logs", pod=CRASHED, previous=True)
    lines = text.splitlines()
    assert lines[0] == (
        f"pod {CRASHED} CrashLoopBackOff; container app, previous run; restarts 7; "
        "last run ended OOMKilled (exit 137) 2m ago"
    )
    assert lines[1] == f"{CRASHED}/app previous run, level=any, the whole log (05:35:00Z..05:40:00Z): 9 lines"
    assert lines[2] == "messages by count:"
    assert lines[3] == "  5 × heap usage <n>% of 230m after GC  (05:36:00Z..05:36:48Z)"
    assert lines[4:7] == [
        f"      05:36:48Z WARN pod={CRASHED} heap usage 94% of 230m after GC",
        f"      05:36:36Z WARN pod={CRASHED} heap usage 93% of 230m after GC",
        f"      05:36:00Z WARN pod={CRASHED} heap usage 90% of 230m after GC",
    ], "the group's newest two lines and its first"
    assert f"      05:37:54Z - pod={CRASHED} at com.acme.checkout.PriceCache.put" in text
    assert f"      05:37:54Z ERROR pod={CRASHED} ERROR java.lang.OutOfMemoryError: Java heap space" in text
    log_request = cluster.requests[-1]
    assert log_request.path == f"/api/v1/namespaces/shop/pods/{CRASHED}/log"
    assert log_request.query == {
        "container": "app", "previous": "true", "timestamps": "true", "tailLines": "2000", "limitBytes": "2000000",
    }  # fmt: skip


async def test_the_current_run_is_grouped_and_filtered_like_search_logs(tools, cluster):
    text = await text_of(tools, "k8s_logs", pod=HEALTHY, since="1h", limit=3)
    assert f"{HEALTHY}/app, level=any, t-1h..now (04:40:00Z..05:40:00Z): 31 lines" in text
    assert "  30 × GET /healthz 200 in <dur>  (05:10:00Z..05:39:00Z)" in text
    assert f"200 in <dur>  (05:10:00Z..05:39:00Z)\n      05:39:00Z INFO pod={HEALTHY} GET /healthz 200 in 3ms" in text
    assert cluster.requests[-1].query["sinceSeconds"] == "3600"
    errors = await text_of(tools, "k8s_logs", pod=HEALTHY, level="error", query="timed out")
    assert ', level=error, query="timed out", the whole log' in errors
    assert "1 × price cache fill failed: upstream pricing timed out after 2000ms" in errors
    none = await text_of(tools, "k8s_logs", pod=HEALTHY, query="no such words")
    assert "No lines matched. Next:" in none


async def test_long_lines_are_cut_and_a_capped_read_is_a_lower_bound(cluster, tmp_path):
    cluster.logs[("shop", HEALTHY, "app", False)] = LogLines(
        [(NOW - timedelta(seconds=60 - i), f"line {i} " + "x" * 400) for i in range(50)]
    )
    tools = tools_for(cluster, tmp_path, log_lines=20)
    text = await text_of(tools, "k8s_logs", pod=HEALTHY, limit=2)
    assert ", the newest 20 lines (" in text
    assert ": ≥20 lines" in text
    assert "note: only the newest 20 lines were read (tools.kubernetes.log_lines)" in text
    newest = text.split("messages by count:\n", 1)[1].splitlines()[1:3]
    assert [len(line) for line in newest] == [LINE_CHARS + 6] * 2, "cut at the same width as search_logs"
    assert all(line.endswith("…") for line in newest)
    assert "x" * 400 not in text


async def test_previous_without_a_restart_is_refused_before_asking_the_kubelet(tools, cluster):
    error = await error_of(tools, "k8s_logs", pod=HEALTHY, previous=True)
    assert f"container app of pod {HEALTHY} has no previous run to read (restarts: 0)" in error
    assert not [r for r in cluster.requests if r.path.endswith("/log")]


async def test_the_kubelets_refusal_points_at_previous_when_the_container_restarted(tools, cluster):
    pod = next(o for o in cluster.objects if o["metadata"]["name"] == CRASHED)
    pod["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "ContainerCreating"}}
    error = await error_of(tools, "k8s_logs", pod=CRASHED)
    assert f'container "app" in pod "{CRASHED}" is waiting to start: ContainerCreating' in error
    assert "It has restarted 7 times. previous=true reads its last run." in error


async def test_an_empty_log_and_the_names_of_pods_and_containers(tools):
    empty = await text_of(tools, "k8s_logs", pod="cart-db-0")
    assert empty.endswith("the container wrote no log lines at all.")
    missing = await error_of(tools, "k8s_logs", pod="checkout")
    assert "no pod 'checkout' in namespace 'shop'. Pods whose names start with it: checkout-7d9f8c6b5-x2x9k" in missing
    container = await error_of(tools, "k8s_logs", pod=HEALTHY, container="sidecar")
    assert f"pod {HEALTHY} has no container 'sidecar'; containers: app" in container


async def test_forbidden_logs_name_the_subresource(tools, cluster):
    cluster.forbid("pods", "shop")
    error = await error_of(tools, "k8s_logs", pod=HEALTHY)
    assert "Kubernetes does not allow OpsAgent to get pod" in error
    assert "HTTP 403 Forbidden" in error


async def test_a_key_a_container_printed_line_by_line_is_redacted_before_its_lines_are_grouped(cluster, tmp_path):
    """The kubelet returns one line per record: the body lines after the header must be masked too."""
    body = [base64.b64encode(random.Random(n).randbytes(48)).decode() for n in range(8)]
    pem = ["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"]
    cluster.logs[("shop", HEALTHY, "app", False)] = LogLines(
        [(NOW - timedelta(seconds=30 - i), line) for i, line in enumerate(["loading TLS key", *pem, "key loaded"])]
    )
    text = await text_of(tools_for(cluster, tmp_path), "k8s_logs", pod=HEALTHY, limit=20)
    assert "[REDACTED:private_key]" in text
    assert not [line for line in body if line[:16] in text]
    assert "key loaded" in text
