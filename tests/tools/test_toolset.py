"""The toolset iterates the configured tool families: the catalogue in the order the model has always read it, and
`opsagent check` with the runbooks first, each family's backend on its own lines, set up once per family."""

from __future__ import annotations

import pkgutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

import opsagent_tools
from bot.eval.memory import NoIncidents
from kernel.catalogue import catalogue_of
from kernel.observations import ObservationStore, read_output_tool
from opsagent_tools.changes import ChangesSettings
from opsagent_tools.demo_incident import DEMO_SECRET_ENV, write_demo_incident
from opsagent_tools.discovery import DiscoveryFamily, DiscoverySettings
from opsagent_tools.kubernetes import KubeApi, KubernetesSettings
from opsagent_tools.memory import MemoryFamily
from opsagent_tools.runbooks import RunbookLibrary
from opsagent_tools.runbooks.library import TextSource
from opsagent_tools.toolset import ToolsSettings, build_tools, check_backends

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
RUNBOOK = "---\ntitle: Checkout 5xx\nservices: [checkout]\n---\nOpen the checkout dashboard.\n"
CLUSTER = KubernetesSettings(all_namespaces=True)
NEVER_CALLED = "https://toolset.invalid/never-called"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> ToolsSettings:
    """The demo's recorded metrics and logs, its git clone and its action webhook, with the changes timeline."""
    settings = write_demo_incident(tmp_path_factory.mktemp("demo"), NOW, action_url=NEVER_CALLED)
    return settings.model_copy(update={"changes": ChangesSettings()})


def runbooks() -> RunbookLibrary:
    return RunbookLibrary(TextSource({"checkout.md": RUNBOOK}))


def test_the_catalogue_keeps_the_order_the_model_has_always_read(demo):
    settings = demo.model_copy(update={"kubernetes": CLUSTER})
    cluster = KubeApi.from_server(CLUSTER, NEVER_CALLED, "never sent")
    registry = build_tools(
        settings, runbooks=runbooks(), memory=NoIncidents(), kube=cluster, environ={DEMO_SECRET_ENV: "s"}
    )
    assert [tool.name for tool in registry] == [
        "query_metrics", "list_metrics", "search_logs", "read_repo_file", "compare_refs",
        "k8s_pods", "k8s_describe", "k8s_events", "k8s_logs", "k8s_rollout_history", "k8s_resource_usage",
        "recent_changes", "search_runbooks", "read_runbook", "similar_incidents", "discover",
        "rollback_deployment", "restart_service",
    ]  # fmt: skip
    discover = registry.get("discover")
    assert discover is not None
    kinds = discover.spec.parameters["properties"]["kind"]["enum"]
    assert kinds[:3] == ["prometheus_metrics", "prometheus_labels", "prometheus_series"]
    assert kinds[3:] == ["kubernetes_namespaces", "kubernetes_workloads"], "the listings follow the families' order"


def test_every_tool_has_a_summary_for_people_of_one_line_that_is_not_the_models_description(demo):
    settings = demo.model_copy(update={"kubernetes": CLUSTER})
    cluster = KubeApi.from_server(CLUSTER, NEVER_CALLED, "never sent")
    registry = build_tools(
        settings, runbooks=runbooks(), memory=NoIncidents(), kube=cluster, environ={DEMO_SECRET_ENV: "s"}
    )
    built_in = [read_output_tool(ObservationStore(page_tokens=500)), catalogue_of(registry).offering("x", 2).tool()]
    tools = [*registry, *built_in]
    assert len(tools) == 20
    for tool in tools:
        assert tool.summary.strip(), f"{tool.name} has no summary for people"
        assert "\n" not in tool.summary, tool.name
        assert len(tool.summary) <= 100, tool.name
        assert tool.summary != tool.description, f"{tool.name}'s summary is the model's description"
    rollback = registry.get("rollback_deployment")
    assert rollback is not None
    assert rollback.summary == "Roll a service back to an earlier version, through the deployment system's webhook"


def test_tools_always_pins_by_name_and_each_tool_carries_its_family_and_its_keywords(demo):
    settings = demo.model_copy(update={"always": ["search_logs", "tracker__recent_incidents"]})
    registry = build_tools(settings, environ={DEMO_SECRET_ENV: "s"})
    assert [tool.name for tool in registry if tool.always] == ["search_logs"], "an MCP name may wait for its server"
    logs = registry.get("search_logs")
    assert logs is not None
    assert logs.family == "LogsFamily"
    assert {"logs", "exceptions"} <= set(logs.keywords)


def test_tools_always_naming_a_tool_not_offered_stops_the_start_with_the_names_that_are(demo):
    settings = demo.model_copy(update={"always": ["search_log"]})
    with pytest.raises(
        ValueError, match=r"^\[tools\] always names 'search_log', which this configuration does not"
    ) as raised:
        build_tools(settings, environ={DEMO_SECRET_ENV: "s"})
    assert "(query_metrics, list_metrics, search_logs," in str(raised.value)


async def test_check_reads_the_runbooks_first_then_each_family_in_the_catalogues_order(demo):
    results = await check_backends(demo, runbooks=runbooks(), environ={DEMO_SECRET_ENV: "s"})
    assert [(result.name, result.ok) for result in results] == [
        ("runbooks", True),
        ("metrics", True),
        ("logs (files)", True),
        ("repo order-service", True),
        ("changes", True),
        ("discover", True),
        ("actions", True),
    ], [result.message for result in results]
    listed = next(result for result in results if result.name == "discover")
    assert listed.message.startswith("lists ")
    assert "prometheus_metrics" in listed.message
    changes = next(result for result in results if result.name == "changes")
    assert changes.message.startswith("sources: prometheus alerts; prometheus versions (")
    assert changes.message.endswith("; git order-service")


async def test_a_backend_that_cannot_be_set_up_fails_its_own_lines_and_nothing_else(demo, tmp_path):
    missing = tmp_path / "no-kubeconfig"
    broken = demo.model_copy(update={"kubernetes": KubernetesSettings(namespaces=("shop",), kubeconfig=missing)})
    results = {result.name: result for result in await check_backends(broken, environ={DEMO_SECRET_ENV: "s"})}
    assert {name for name, result in results.items() if not result.ok} == {"kubernetes", "changes", "discover"}
    assert results["kubernetes"].message == results["changes"].message == results["discover"].message
    assert results["kubernetes"].message.startswith("tools.kubernetes: cannot read the kubeconfig: ")
    with pytest.raises(ValueError, match=r"^tools.kubernetes: cannot read the kubeconfig: "):
        build_tools(broken, environ={DEMO_SECRET_ENV: "s"})


async def test_the_families_without_a_backend_of_their_own_reach_nothing():
    memory = MemoryFamily(NoIncidents(), now=lambda: NOW)
    assert await memory.check() == [], "the memory is the bot's run store: the bot checks it"
    assert await DiscoveryFamily(DiscoverySettings(), [memory]).check() == [], "nothing to list: no line"
    assert DiscoveryFamily(DiscoverySettings(), [memory]).tools() == [], "nothing to list: no discover tool"


NOT_FAMILIES = {"demo_cluster"}
"""Rooms of opsagent_tools that are no tool family: the demo incident's cluster, served as a Kubernetes API."""


def test_every_family_has_its_settings_tools_and_check():
    root = Path(opsagent_tools.__file__).parent
    rooms = {module.name for module in pkgutil.iter_modules([str(root)]) if module.ispkg}
    assert rooms >= NOT_FAMILIES, "a room named here as no family is gone: drop it from the list"
    families = sorted(rooms - NOT_FAMILIES)
    assert len(families) == 10, families
    for family in families:
        files = {path.name for path in (root / family).glob("*.py")}
        expected = {"settings.py", "tools.py", "check.py"}
        assert expected <= files, f"{family} lacks {sorted(expected - files)}"
