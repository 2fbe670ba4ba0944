"""[tools.changes] end to end: the registry, its description, `opsagent check` and `opsagent tools list`."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.cli.main import main
from opsagent_tools.changes import ChangesSettings
from opsagent_tools.toolset import ToolsSettings, build_tools, check_backends
from worlds.kube_tools import settings_for


def test_the_section_adds_one_read_only_tool_that_names_its_sources(settings):
    registry = build_tools(settings)
    tool = registry.get("recent_changes")
    assert tool is not None
    assert not tool.side_effect
    assert tool.timeout == 20
    description = tool.spec.description
    assert description.startswith("See what changed around the incident: one timeline, newest first, merged from")
    assert "Use it EARLY, right after confirming the symptom" in description
    assert (
        "(alerts that fired (Prometheus' ALERTS series), version changes of .+_build_info{version} in Prometheus, "
        "Kubernetes rollouts (ReplicaSet revisions, with what each changed), tags and merges of order-service, "
        "GitHub deployments and releases of acme/payment-service, tags and merges of payment-service)"
    ) in description
    assert set(tool.spec.parameters["properties"]) == {"service", "window"}
    assert "recent_changes" not in build_tools(settings.model_copy(update={"changes": None}))


def test_sources_can_be_turned_off_one_by_one_but_not_all(settings):
    only_git = ChangesSettings(kubernetes=False, github=False, alerts=False, build_info_metric="")
    tool = build_tools(settings.model_copy(update={"changes": only_git})).get("recent_changes")
    assert "every configured source (tags and merges of order-service, tags and merges of payment-service)" in (
        tool.spec.description
    )
    with pytest.raises(ValueError, match=r"tools.changes is configured, but none of its sources is"):
        build_tools(settings.model_copy(update={"changes": only_git.model_copy(update={"repos": False})}))


async def test_check_names_the_sources_and_the_version_metrics_found(settings):
    results = {r.name: r for r in await check_backends(settings)}
    changes = results["changes"]
    assert changes.ok, changes.message
    assert changes.message == (
        "sources: prometheus alerts; prometheus versions (app_build_info); kubernetes; git order-service; "
        "github acme/payment-service; git payment-service"
    )
    guessed = settings.model_copy(update={"changes": ChangesSettings(build_info_metric="orders_version_info")})
    (missing,) = [r for r in await check_backends(guessed) if r.name == "changes"]
    assert "prometheus versions (no series named like orders_version_info in the last 6h, so no versions" in (
        missing.message
    )
    assert 'set tools.changes.build_info_metric, or "" to leave versions out' in missing.message


async def test_check_says_when_there_is_nothing_to_read():
    (alone,) = await check_backends(ToolsSettings(changes=ChangesSettings()))
    assert not alone.ok
    assert alone.message.startswith("tools.changes is configured, but none of its sources is: it reads [tools.kube")


async def test_check_fails_the_timeline_when_no_source_answers(cluster, clone, tmp_path, capsys):
    """`✓ changes` while its only source is unreachable would promise a timeline that cannot come: the sources are
    read once, a source that does not answer is a warning, and none answering fails the family."""
    unreachable = settings_for(cluster, tmp_path, namespaces=("shop",), context="elsewhere")
    config = tmp_path / "opsagent.toml"
    config.write_text(
        f'[tools.kubernetes]\nkubeconfig = "{unreachable.kubeconfig}"\ncontext = "elsewhere"\nnamespaces = ["shop"]\n'
        "request_timeout_s = 2\n\n[tools.changes]\n"
    )
    assert await asyncio.to_thread(main, ["--config", str(config), "check"]) == 1
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "changes:" in line]
    assert line.startswith(
        "✗ changes: no source could be read, so the timeline would be empty: kubernetes: not read: namespace shop: "
        "Cannot reach the Kubernetes API server at http://127.0.0.1:9"
    )
    config.write_text(config.read_text() + f'\n[tools.repos.repositories]\norder-service = "{clone}"\n')
    assert await asyncio.to_thread(main, ["--config", str(config), "check"]) == 1, "the cluster still fails"
    lines = [line for line in capsys.readouterr().out.splitlines() if "changes:" in line]
    assert lines[0] == "✓ changes: sources: git order-service", "one source answers: the timeline has it"
    assert lines[1].startswith("⚠ changes: kubernetes: not read: namespace shop: Cannot reach the Kubernetes API")
    assert len(lines) == 2


def test_tools_list_shows_it_read_only(capsys, tmp_path, prometheus, clone):
    config = tmp_path / "opsagent.toml"
    config.write_text(
        f'[tools.metrics]\nurl = "{prometheus.url}"\n\n[tools.repos.repositories]\norder-service = "{clone}"\n\n'
        '[tools.changes]\nbuild_info_metric = "app_build_info"\ngithub_environments = ["production"]\n'
    )
    assert main(["--config", str(config), "tools", "list"]) == 0
    out = capsys.readouterr().out
    assert "recent_changes [read-only]\n  List what changed around a service lately: deploys, config, merges" in out
    assert main(["--config", str(config), "tools", "list", "--json"]) == 0
    (spec,) = [spec for spec in json.loads(capsys.readouterr().out) if spec["name"] == "recent_changes"]
    assert (
        "version changes of app_build_info{version} in Prometheus, tags and merges of order-service)"
        in (spec["description"])
    ), "the model is told which sources it reads"
    assert (
        main(["--config", str(config), "tools", "call", "recent_changes", "--args", json.dumps({"window": "1h"})]) == 0
    )
    called = capsys.readouterr().out
    assert called.startswith("changes across all services in the last 1h, newest first")
