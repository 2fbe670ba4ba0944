"""The production tool catalogue with recorded backends, for evaluation runs.

The tools are built by the real builder (same names, arguments, descriptions and side-effect flags),
then each handler is swapped for a lookup in the scenario's recordings, so the model sees the
production catalogue while nothing reaches a backend, and no side effect can ever be executed.
A scenario's runbooks are its recording of the runbook library, and its past incidents of the memory: the runbook
tools and similar_incidents read them for real.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult, TextContent
from mcp.types import Tool as McpTool

from bot.eval.memory import NoIncidents
from bot.eval.scenarios import RecordedMcpTool, Recording
from bot.eval.scoring import args_match
from kernel import Tool, ToolCall, ToolFailure, ToolRegistry
from opsagent_tools.actions import ActionWebhookSettings
from opsagent_tools.changes import ChangesSettings
from opsagent_tools.kubernetes import KubeApi, KubernetesSettings
from opsagent_tools.logs import LogsSettings
from opsagent_tools.mcp import McpServerSettings, ToolCaller, full_name, server_tools
from opsagent_tools.memory import IncidentMemory
from opsagent_tools.metrics import MetricsSettings
from opsagent_tools.repos import RepoConfig, RepoSettings
from opsagent_tools.runbooks import RunbookLibrary, runbook_tools
from opsagent_tools.runbooks.library import TextSource
from opsagent_tools.toolset import ActionsSettings, ToolsSettings, build_tools

NEVER_CALLED_URL = "https://evaluation.invalid/never-called"
"""The backends the real tools are built with; their handlers are replaced, so nothing is ever sent."""
NO_CLONE = Path("/nonexistent/evaluation-has-no-clone")
CATALOGUE_LOGS = LogsSettings(backend="loki")
"""The log tool is described as for Loki, the most common production log store."""
CATALOGUE_KUBERNETES = KubernetesSettings(all_namespaces=True)
"""The Kubernetes tools are described as for a cluster whose every namespace may be read: scenarios name theirs."""
CATALOGUE_CHANGES = ChangesSettings()
"""The change timeline is described with every source on, over the backends above."""
SECRET_ENV = "OPSAGENT_EVAL_NEVER_SENT"
MEMORY_TOOL = "similar_incidents"


def production_tools(
    repos: Sequence[str], runbooks: RunbookLibrary | None = None, memory: IncidentMemory | None = None
) -> ToolRegistry:
    """Every tool the production builder makes, with `repos` as the configured repositories, `runbooks` as
    the runbook library (None: no runbook tools, as in production without `[knowledge]`) and `memory` as the
    memory of past incidents (None: no similar_incidents). The Kubernetes tools and timeline read a cluster that
    is never called: the builder would otherwise read a kubeconfig."""
    settings = ToolsSettings(
        metrics=MetricsSettings(url=NEVER_CALLED_URL),
        logs=CATALOGUE_LOGS,
        repos=RepoSettings(repositories={name: RepoConfig(path=NO_CLONE) for name in repos}),
        kubernetes=CATALOGUE_KUBERNETES,
        changes=CATALOGUE_CHANGES,
        actions=ActionsSettings(webhook=ActionWebhookSettings(url=NEVER_CALLED_URL, secret_env=SECRET_ENV)),
    )
    environ = {SECRET_ENV: "evaluation: never sent"}
    return build_tools(settings, runbooks=runbooks, environ=environ, kube=_never_called_cluster(), memory=memory)


@cache
def _never_called_cluster() -> KubeApi:
    """Made once: setting up its TLS context takes a fifth of a second, and no request is ever sent."""
    return KubeApi.from_server(CATALOGUE_KUBERNETES, NEVER_CALLED_URL, "evaluation: never sent")


@cache
def catalogue_names() -> frozenset[str]:
    """The names of the production tools, the runbook and memory tools included: what a scenario may record, expect
    or script."""
    tools = production_tools(["service"], RunbookLibrary(TextSource({})), NoIncidents())
    return frozenset(tool.name for tool in tools)


def recorded_registry(
    recordings: Sequence[Recording],
    repos: Sequence[str],
    runbooks: RunbookLibrary | None = None,
    mcp_tools: Sequence[RecordedMcpTool] = (),
    memory: IncidentMemory | None = None,
) -> ToolRegistry:
    """The production catalogue, plus the scenario's MCP tools, answering from `recordings`, except the runbook
    and memory tools, which read the scenario's own runbooks and past incidents for real; side-effect tools keep
    their real preview, which dispatch shows under the dry-run policy the evaluation always uses."""
    live = {tool.name for tool in runbook_tools(runbooks)} if runbooks is not None else set()
    live |= {MEMORY_TOOL} if memory is not None else set()
    registry = ToolRegistry(
        tool if tool.name in live else dataclasses.replace(tool, handler=_recorded_handler(tool, recordings))
        for tool in production_tools(repos, runbooks, memory)
    )
    for tool in recorded_mcp_tools(mcp_tools, recordings):
        registry.add(tool)
    return registry


def recorded_mcp_tools(declared: Sequence[RecordedMcpTool], recordings: Sequence[Recording]) -> list[Tool]:
    """The scenario's MCP tools, built by the production builder, their server answering from `recordings`
    (a recorded `error` is the server's isError result)."""
    tools: list[Tool] = []
    for server in dict.fromkeys(entry.server for entry in declared):
        mine = [entry for entry in declared if entry.server == server]
        settings = McpServerSettings(url=NEVER_CALLED_URL, read_only=[e.tool for e in mine if e.read_only])
        definitions = [McpTool(name=e.tool, description=e.description, input_schema=e.input_schema) for e in mine]
        entries, skipped = server_tools(server, settings, definitions, _recorded_server(server, recordings))
        if skipped:
            first = skipped[0]
            raise ValueError(f"MCP tool {full_name(first.server, first.mcp_name)}: {first.reason}")
        tools += [entry.tool for entry in entries]
    return tools


def find_recording(recordings: Sequence[Recording], call: ToolCall) -> Recording | None:
    """The recording for `call`: the one matching the most arguments; the first listed among equals."""
    matching = [r for r in recordings if r.tool == call.name and args_match(r.args, call.args)]
    return max(matching, key=lambda r: len(r.args), default=None)


def _recorded_server(server: str, recordings: Sequence[Recording]) -> ToolCaller:
    async def call(mcp_name: str, arguments: dict[str, Any]) -> CallToolResult:
        recording = _recording_for(recordings, ToolCall(name=full_name(server, mcp_name), args=arguments))
        if recording.error is not None:
            return CallToolResult(content=[TextContent(text=recording.error)], is_error=True)
        assert recording.output is not None  # a Recording has exactly one of output and error
        return CallToolResult(content=[TextContent(text=recording.output)])

    return call


def _recording_for(recordings: Sequence[Recording], call: ToolCall) -> Recording:
    recording = find_recording(recordings, call)
    if recording is None:
        raise ToolFailure(
            f"no recorded output for {call.render()}: this evaluation scenario has no data for that call; "
            "use what other calls return"
        )
    return recording


def _recorded_handler(tool: Tool, recordings: Sequence[Recording]) -> Any:
    async def recorded(**kwargs: Any) -> str:
        args = {name: value for name, value in kwargs.items() if name != tool.context_param and value is not None}
        recording = _recording_for(recordings, ToolCall(name=tool.name, args=args))
        if recording.error is not None:
            raise ToolFailure(recording.error)
        assert recording.output is not None  # a Recording has exactly one of output and error
        return recording.output

    return recorded
