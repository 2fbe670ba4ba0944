"""[tools.kubernetes] end to end: its validation, the registry and `opsagent check` / `tools list` against the fake."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from bot.cli.main import main
from opsagent_tools.kubernetes import KubernetesSettings
from opsagent_tools.toolset import ToolsSettings, build_tools, check_backends
from worlds.kube_tools import settings_for

K8S_TOOLS = ["k8s_pods", "k8s_describe", "k8s_events", "k8s_logs", "k8s_rollout_history", "k8s_resource_usage"]


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({}, "tools.kubernetes.namespaces is empty"),
        ({"namespaces": ["shop"], "all_namespaces": True}, "not both"),
        ({"namespaces": ["Shop_Prod"]}, "not namespace names"),
        ({"namespaces": ["shop"], "in_cluster": True, "context": "x"}, "drop kubeconfig/context"),
        ({"namespaces": ["shop"], "request_timeout_s": 40}, "must not exceed timeout_s"),
        ({"namespaces": ["shop"], "secrets": True}, "Extra inputs are not permitted"),
    ],
)
def test_settings_refuse_an_unsafe_or_unclear_scope(fields, problem):
    with pytest.raises(ValidationError, match=problem):
        KubernetesSettings(**fields)


def test_all_namespaces_must_be_explicit():
    settings = KubernetesSettings(all_namespaces=True)
    assert settings.allows("anything")
    assert settings.default_namespace == "default"


def test_the_registry_has_the_read_only_tools_and_a_bad_kubeconfig_fails_at_start_up(cluster, tmp_path):
    registry = build_tools(ToolsSettings(kubernetes=settings_for(cluster, tmp_path)))
    assert registry.names() == [*K8S_TOOLS, "discover"], "discover lists the namespaces and workloads"
    assert not any(tool.side_effect for tool in registry)
    assert "shop, default" in registry.get("k8s_pods").spec.parameters["properties"]["namespace"]["description"]
    missing = settings_for(cluster, tmp_path, kubeconfig=tmp_path / "nope")
    with pytest.raises(ValueError, match=r"cannot read the kubeconfig: Configuration file .*nope not found"):
        build_tools(ToolsSettings(kubernetes=missing))
    with pytest.raises(ValueError, match="Context 'prod' not found"):
        build_tools(ToolsSettings(kubernetes=settings_for(cluster, tmp_path, context="prod")))


def test_a_context_naming_an_undefined_cluster_is_named(cluster, tmp_path):
    path = cluster.kubeconfig(tmp_path)
    path.write_text(path.read_text().replace('"cluster": "fake"', '"cluster": "ghost"'))
    with pytest.raises(ValueError, match="the kubeconfig's context refers to 'ghost', which it does not define"):
        build_tools(ToolsSettings(kubernetes=settings_for(cluster, tmp_path, kubeconfig=path)))


def test_in_cluster_outside_a_pod_says_to_use_a_kubeconfig(monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    settings = KubernetesSettings(namespaces=("shop",), in_cluster=True)
    with pytest.raises(ValueError, match="cannot read the pod's service account"):
        build_tools(ToolsSettings(kubernetes=settings))


def test_kubeconfig_defaults_to_the_environment_variable(cluster, tmp_path):
    path = cluster.kubeconfig(tmp_path)
    settings = KubernetesSettings(namespaces=("shop",))
    registry = build_tools(ToolsSettings(kubernetes=settings), environ={"KUBECONFIG": str(path)})
    assert "k8s_pods" in registry


async def test_check_reports_readable_and_refused_namespaces_and_metrics_server(cluster, tmp_path):
    settings = settings_for(cluster, tmp_path, namespaces=("shop", "payments"))
    ok, listed = await check_backends(ToolsSettings(kubernetes=settings))
    assert (listed.name, listed.ok) == ("discover", True), "discover lists the cluster's kinds"
    assert ok.ok, ok.message
    assert ok.message == f"{cluster.url}: pods readable in shop, payments; metrics-server available"
    assert {(r.path, r.query["limit"]) for r in cluster.requests} >= {("/api/v1/namespaces/shop/pods", "1")}
    cluster.forbid("pods", "payments")
    cluster.metrics = False
    refused, _ = await check_backends(ToolsSettings(kubernetes=settings))
    assert not refused.ok
    assert refused.name == "kubernetes"
    assert "pods readable in shop; refused in payments (HTTP 403 Forbidden): bind the read-only role" in refused.message
    assert refused.message.endswith("metrics-server not installed (k8s_resource_usage will say so)")


async def test_check_names_an_unreachable_cluster(cluster, tmp_path):
    result, _ = await check_backends(ToolsSettings(kubernetes=settings_for(cluster, tmp_path, context="elsewhere")))
    assert not result.ok
    assert "Cannot reach the Kubernetes API server at http://127.0.0.1:9" in result.message


async def test_the_cli_lists_the_tools_as_read_only_and_checks_the_cluster(cluster, tmp_path, capsys, monkeypatch):
    for key in ("OPSAGENT_LLM_MODEL", "OPSAGENT_LLM_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    config = tmp_path / "opsagent.toml"
    config.write_text(
        f'[tools.kubernetes]\nkubeconfig = "{cluster.kubeconfig(tmp_path)}"\nnamespaces = ["shop"]\nrequest_timeout_s = 5\n'
    )
    assert await asyncio.to_thread(main, ["--config", str(config), "tools", "list"]) == 0
    listing = capsys.readouterr().out
    for name in K8S_TOOLS:
        assert f"{name} [read-only]\n" in listing
    assert await asyncio.to_thread(main, ["--config", str(config), "check"]) == 0
    assert f"✓ kubernetes: {cluster.url}: pods readable in shop; metrics-server available" in capsys.readouterr().out


BROKEN_KUBECONFIGS = [
    (
        "apiVersion: v1\nclusters:\n- name: prod\n  cluster:\n    server: https://10.0.0.1\n   bad: indent\n",
        "is not valid YAML: did not find expected key at line 6, column 4",
    ),
    (
        "current-context: a: b\n",
        "is not valid YAML: mapping values are not allowed in this context at line 1, column 19",
    ),
    ("clusters: [\n", "is not valid YAML: did not find expected node content at line 2, column 1"),
    ("- a\n- b\n", "is not a kubeconfig: it has no list of clusters"),
    ("clusters: []\n", "is malformed: 'contexts' is missing"),
    ("clusters: [{name: a, cluster: {server: 5}}]\ncontexts: []\n", "is malformed: Expected `str`, got `int`"),
]


@pytest.mark.parametrize(("text", "problem"), BROKEN_KUBECONFIGS)
def test_a_broken_kubeconfig_is_one_line_naming_the_file_and_where(tmp_path, capsys, text, problem):
    """What a person sees from `tools list` and `check`: the file and the YAML position, not "This is a bug"."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(text)
    config = tmp_path / "opsagent.toml"
    config.write_text(f'[tools.kubernetes]\nkubeconfig = "{kubeconfig}"\nnamespaces = ["shop"]\n')
    assert main(["--config", str(config), "tools", "list"]) == 2
    (said,) = capsys.readouterr().err.splitlines()
    assert said.startswith(f"opsagent: tools.kubernetes: {'' if 'kubeconfig' in problem else 'the kubeconfig '}")
    assert f"{kubeconfig} {problem}" in said
    assert main(["--config", str(config), "check"]) == 1
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("✗ kubernetes:")]
    assert line.startswith("✗ kubernetes: tools.kubernetes: ")
    assert f"{kubeconfig} {problem}" in line
