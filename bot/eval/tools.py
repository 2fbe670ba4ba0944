"""The production tool catalogue with recorded backends, for evaluation runs.

The tools are built by the real builders (same names, arguments, descriptions and side-effect flags),
then each handler is swapped for a lookup in the scenario's recordings, so the model sees the
production catalogue while nothing reaches a backend, and no side effect can ever be executed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from bot.eval.scenarios import Recording
from bot.eval.scoring import args_match
from kernel import Tool, ToolCall, ToolFailure, ToolRegistry
from opsagent_tools.actions.webhook import ActionWebhook, ActionWebhookSettings, action_tools
from opsagent_tools.changes import ChangesSettings, change_sources, recent_changes_tool
from opsagent_tools.kubernetes import KubeApi, KubernetesSettings, kubernetes_tools
from opsagent_tools.logs.tools import LogsSettings, log_tools
from opsagent_tools.metrics.prometheus import PrometheusClient
from opsagent_tools.metrics.tools import MetricsSettings, metrics_tools
from opsagent_tools.repos.tools import RepoConfig, RepoSettings, build_backends, repo_tools

NEVER_CALLED_URL = "https://evaluation.invalid/never-called"
"""The backends the real tools are built with; their handlers are replaced, so nothing is ever sent."""
NO_CLONE = Path("/nonexistent/evaluation-has-no-clone")
CATALOGUE_LOGS = LogsSettings(backend="loki")
"""The log tool is described as for Loki, the most common production log store."""
CATALOGUE_KUBERNETES = KubernetesSettings(all_namespaces=True)
"""The Kubernetes tools are described as for a cluster whose every namespace may be read: scenarios name theirs."""
CATALOGUE_CHANGES = ChangesSettings()
"""The change timeline is described with every source on, over the backends above."""


def production_tools(repos: Sequence[str]) -> list[Tool]:
    """Every tool the production builders make, with `repos` as the configured repositories."""
    repo_settings = RepoSettings(repositories={name: RepoConfig(path=NO_CLONE) for name in repos})
    metrics = MetricsSettings(url=NEVER_CALLED_URL)
    webhook = ActionWebhook(ActionWebhookSettings(url=NEVER_CALLED_URL), secret=b"evaluation: never sent")
    sources = change_sources(
        CATALOGUE_CHANGES,
        kube=_never_called_cluster(),
        repos=repo_settings,
        backends=build_backends(repo_settings),
        metrics=metrics,
        metrics_client=PrometheusClient(base_url=NEVER_CALLED_URL),
    )
    return [
        *metrics_tools(metrics),
        *log_tools(CATALOGUE_LOGS),
        *repo_tools(repo_settings),
        *kubernetes_tools(CATALOGUE_KUBERNETES, api=_never_called_cluster()),
        recent_changes_tool(CATALOGUE_CHANGES, sources),
        *action_tools(webhook),
    ]


@cache
def _never_called_cluster() -> KubeApi:
    """Made once: setting up its TLS context takes a fifth of a second, and no request is ever sent."""
    return KubeApi.from_server(CATALOGUE_KUBERNETES, NEVER_CALLED_URL, "evaluation: never sent")


@cache
def catalogue_names() -> frozenset[str]:
    """The names of the production tools: what a scenario may record, expect or script."""
    return frozenset(tool.name for tool in production_tools(["service"]))


def recorded_registry(recordings: Sequence[Recording], repos: Sequence[str]) -> ToolRegistry:
    """The production catalogue answering from `recordings`; side-effect tools keep their real preview,
    which dispatch shows under the dry-run policy the evaluation always uses."""
    return ToolRegistry(
        dataclasses.replace(tool, handler=_recorded_handler(tool, recordings)) for tool in production_tools(repos)
    )


def find_recording(recordings: Sequence[Recording], call: ToolCall) -> Recording | None:
    """The recording for `call`: the one matching the most arguments; the first listed among equals."""
    matching = [r for r in recordings if r.tool == call.name and args_match(r.args, call.args)]
    return max(matching, key=lambda r: len(r.args), default=None)


def _recorded_handler(tool: Tool, recordings: Sequence[Recording]) -> Any:
    async def recorded(**kwargs: Any) -> str:
        args = {name: value for name, value in kwargs.items() if name != tool.context_param and value is not None}
        call = ToolCall(name=tool.name, args=args)
        recording = find_recording(recordings, call)
        if recording is None:
            raise ToolFailure(
                f"no recorded output for {call.render()}: this evaluation scenario has no data for that call; "
                "use what other calls return"
            )
        if recording.error is not None:
            raise ToolFailure(recording.error)
        assert recording.output is not None  # a Recording has exactly one of output and error
        return recording.output

    return recorded
