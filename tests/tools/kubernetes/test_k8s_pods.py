"""k8s_pods against the fake API server: a workload's pods with status, restarts and last terminations, and the
failures every Kubernetes tool shares (RBAC, unknown names, scope, a slow or absent server, bad credentials)."""

from __future__ import annotations

from aiohttp import web

from testkit.servers.local_server import LocalServer
from worlds.kube_tools import error_of, text_of, tools_for


async def test_a_deployments_pods_show_the_crash_loop_and_the_oom_kills(tools, cluster):
    text = await text_of(tools, "k8s_pods", workload="checkout")
    assert text.startswith("deployment/checkout in shop: 3 desired, 1 ready, 3 up to date, 1 available")
    assert "3 pods: 2 CrashLoopBackOff, 1 Running; 13 restarts; last terminations: OOMKilled ×2" in text
    row = next(line for line in text.splitlines() if line.startswith("checkout-7d9f8c6b5-x2x9k"))
    assert row.split()[1:5] == ["CrashLoopBackOff", "0/1", "7", "(2m"]
    assert row.endswith("node-a  app: OOMKilled (exit 137) 2m ago")
    assert text.index("x2x9k") < text.index("m2kxj"), "unhealthy pods come first"
    (pods,) = [r for r in cluster.requests if r.path == "/api/v1/namespaces/shop/pods"]
    assert pods.query["labelSelector"] == "app=checkout"
    assert pods.authorization == "Bearer test-service-account-token"


async def test_a_statefulset_is_found_by_kind_or_bare_name(tools):
    for workload in ("statefulset/cart-db", "sts/cart-db", "cart-db"):
        text = await text_of(tools, "k8s_pods", workload=workload)
        assert text.startswith("statefulset/cart-db in shop: 1 desired, 1 ready; selector app=cart-db")
        assert "cart-db-0  Running" in text


async def test_a_label_selector_and_the_whole_namespace(tools, cluster):
    text = await text_of(tools, "k8s_pods", selector="app in (search-api,cart-db)")
    assert "2 pods: 1 Pending (Unschedulable), 1 Running" in text
    everything = await text_of(tools, "k8s_pods")
    assert everything.startswith("pods in shop:\n5 pods:")
    assert cluster.requests[-1].query == {"limit": "500"}


async def test_an_unknown_workload_names_the_close_ones(tools):
    error = await error_of(tools, "k8s_pods", workload="checkot")
    assert "No deployment, statefulset or daemonset \"checkot\" in namespace 'shop'." in error
    assert "Nearest: deployment/checkout, deployment/checkout-api." in error
    assert "deployment/checkout, deployment/checkout-api, statefulset/cart-db" in error
    wrong_kind = await error_of(tools, "k8s_pods", workload="job/checkout")
    assert "'job' is not a workload kind" in wrong_kind


async def test_a_namespace_outside_the_allowlist_is_refused_before_any_request(tools, cluster):
    error = await error_of(tools, "k8s_pods", namespace="prod")
    assert "namespace 'prod' is not allowed; allowed: shop, default" in error
    assert cluster.requests == []


async def test_forbidden_by_rbac_says_which_namespace_and_what_to_do(tools, cluster):
    cluster.forbid("pods", "shop")
    error = await error_of(tools, "k8s_pods")
    assert "Kubernetes does not allow OpsAgent to list pods in namespace 'shop'" in error
    assert 'HTTP 403 Forbidden: pods is forbidden: User "system:serviceaccount:opsagent:opsagent" cannot list' in error
    assert "the opsagent-read ClusterRole, deploy/k8s/clusterrole.yaml" in error


async def test_a_slow_api_server_times_out_with_advice(cluster, tmp_path):
    tools = tools_for(cluster, tmp_path, request_timeout_s=0.2, timeout_s=5)
    cluster.delay_s = 5
    error = await error_of(tools, "k8s_pods", workload="checkout")
    assert "did not answer within 0.2 s (trying to get deployment 'checkout' in namespace 'shop')" in error
    assert "Narrow the request" in error


async def test_an_unreachable_server_and_rejected_credentials(cluster, tmp_path):
    elsewhere = tools_for(cluster, tmp_path, context="elsewhere")
    assert "Cannot reach the Kubernetes API server at http://127.0.0.1:9" in await error_of(elsewhere, "k8s_pods")
    bad = tools_for(cluster, tmp_path, kubeconfig=cluster.kubeconfig(tmp_path, token="expired"))
    error = await error_of(bad, "k8s_pods")
    assert "Kubernetes rejected OpsAgent's credentials (HTTP 401 Unauthorized: Unauthorized)" in error


class LoginPage(LocalServer):
    """A proxy's login page where the API server should be: 200 and HTML for everything."""

    def routes(self, app: web.Application) -> None:
        async def page(_: web.Request) -> web.Response:
            return web.Response(text="<html>please log in</html>", content_type="text/html")

        app.router.add_get("/{tail:.*}", page)


async def test_a_server_that_is_not_kubernetes_is_named(cluster, tmp_path):
    async with LoginPage() as login:
        path = cluster.kubeconfig(tmp_path)
        path.write_text(path.read_text().replace(cluster.url, login.url))
        error = await error_of(tools_for(cluster, tmp_path, kubeconfig=path), "k8s_pods")
    assert f"The server at {login.url} answered the request to list pods" in error
    assert "not a Kubernetes object" in error


async def test_a_list_cut_at_list_limit_says_so(cluster, tmp_path):
    tools = tools_for(cluster, tmp_path, list_limit=2)
    text = await text_of(tools, "k8s_pods")
    assert "2+ pods:" in text
    assert text.endswith("… more pods not shown: narrow with a selector")
    assert cluster.requests[-1].query["limit"] == "2"
    events = await text_of(tools, "k8s_events")
    assert "note: more events exist than were read (list_limit)" in events
