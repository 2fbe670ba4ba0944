"""(t) Prompt tokens of one investigation, by configuration: what the tool catalogue costs as families are added.

A recording model server (`FakeModelServer`, over the OpenAI wire) plays the same three turns, `query_metrics` →
`search_logs` → `finish`, on the demo incident's recordings (metrics, logs and a git clone, read by the real
tools). It runs once with metrics and logs configured, and once with every family: metrics, logs, repos, actions,
Kubernetes (the fake API server), MCP (two SDK servers over stdio), changes, runbooks, memory and discovery. Each
request the server recorded is counted whole and by part: the system prompt, the tool schemas, and the
conversation (the task, the model's turns and the observations).

Tokens are o200k_base's (tiktoken) when the encoding loads, else characters ÷ 4; the report says which.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.eval.memory import NoIncidents
from kernel import Agent, OpenAICompatibleLLM, ToolRegistry
from opsagent_tools.changes import ChangesSettings
from opsagent_tools.demo_incident import DEMO_SECRET_ENV, write_demo_incident
from opsagent_tools.kubernetes import KubernetesSettings
from opsagent_tools.mcp import McpConnections, McpServerSettings, McpSettings
from opsagent_tools.runbooks import RunbookLibrary
from opsagent_tools.runbooks.library import TextSource
from opsagent_tools.toolset import ToolsSettings, build_tools
from testkit.fakes.kube_api import FakeKubeApi
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_tool_call

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
TASK = "order-service 5xx went from 0.1% to 12% in 3 minutes, find the root cause"
MCP_SERVER = Path(__file__).resolve().parents[1] / "testkit" / "servers" / "mcp_ops_server.py"
RUNBOOK = (
    "---\ntitle: Order service 5xx\nservices: [order-service]\n---\n"
    "Check the 5xx rate, then the service's error logs, then what was deployed.\n"
)
TURNS = (
    ("query_metrics", {"service": "order-service", "metric": "http_5xx_rate", "window": "30m"}),
    ("search_logs", {"service": "order-service", "since": "15m", "level": "info"}),
    ("finish", {"answer": "**Root cause**: v2.14.0 cut order-service's database pool (steps 1-2)."}),
)
PARTS = ("system", "schemas", "conversation", "observations")
RATIO_TARGET = 1.25
"""Every family may cost at most this much more than metrics and logs alone."""


def counter() -> tuple[str, Callable[[str], int]]:
    """o200k_base when tiktoken and its encoding load (offline: from a cache), else characters ÷ 4."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("o200k_base")
    except Exception:
        return "characters ÷ 4 (tiktoken's o200k_base could not load offline)", lambda text: len(text) // 4
    return "tiktoken o200k_base", lambda text: len(encoding.encode(text))


def split(request: dict[str, Any], count: Callable[[str], int]) -> dict[str, int]:
    """One OpenAI chat request's tokens by part: the system message, the tools' JSON, tool-role messages (the
    observations), and the rest of the messages (the task, the model's turns)."""
    parts = dict.fromkeys(PARTS, 0)
    parts["schemas"] = count(json.dumps(request.get("tools", []), ensure_ascii=False))
    for message in request["messages"]:
        text = json.dumps(message, ensure_ascii=False)
        role = message["role"]
        parts["system" if role == "system" else "observations" if role == "tool" else "conversation"] += count(text)
    return parts


async def investigate(tools: ToolRegistry, count: Callable[[str], int]) -> dict[str, Any]:
    """The three turns against `tools`: each request's tokens by part, and the tools it offered in full."""
    async with FakeModelServer() as server:
        server.script(
            *(
                Reply(openai_completion(None, tool_calls=[openai_tool_call(f"c{n}", name, args)]))
                for n, (name, args) in enumerate(TURNS)
            )
        )
        llm = OpenAICompatibleLLM(model="fake-gpt", base_url=server.url, api_key="sk-bench")
        result = await Agent(llm=llm, tools=tools).run(TASK)
        requests = [request.json for request in server.requests]
    turns = [split(request, count) for request in requests]
    return {
        "stop": str(result.stop_reason),
        "tools": len(tools.names()),
        "turns": turns,
        "total": sum(sum(turn.values()) for turn in turns),
        "parts": {part: sum(turn[part] for turn in turns) for part in PARTS},
        "offered": [[tool["function"]["name"] for tool in request.get("tools", [])] for request in requests],
    }


def every_family(demo: ToolsSettings, cluster: FakeKubeApi, root: Path) -> ToolsSettings:
    """The demo's four families with changes, Kubernetes (the fake API server) and two MCP servers."""
    mcp = McpSettings(
        servers={
            name: McpServerSettings(
                command=sys.executable, args=[str(MCP_SERVER), "--extra", str(extra)], read_only=["recent_incidents"]
            )
            for name, extra in (("tracker", 0), ("wiki", 12))
        }
    )
    kube = KubernetesSettings(namespaces=("shop",), kubeconfig=cluster.kubeconfig(root))
    return demo.model_copy(update={"changes": ChangesSettings(), "kubernetes": kube, "mcp": mcp})


async def tokens_by_configuration() -> dict[str, Any]:
    """The investigation with metrics and logs only, and with every family configured."""
    method, count = counter()
    environ = {DEMO_SECRET_ENV: "bench-secret"}
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        demo = write_demo_incident(root / "demo", NOW, action_url="https://bench.invalid/never-called")
        two = demo.model_copy(update={"repos": None, "actions": None})
        results = {"method": method, "task": TASK}
        results["two"] = await investigate(build_tools(two, environ=environ, previews_only=True), count)
        async with AsyncExitStack() as stack:
            cluster = await stack.enter_async_context(FakeKubeApi([], now=NOW))
            settings = every_family(demo, cluster, root)
            mcp = await stack.enter_async_context(McpConnections(settings.mcp, environ={}))
            tools = build_tools(
                settings,
                environ=environ,
                previews_only=True,
                mcp=mcp,
                runbooks=RunbookLibrary(TextSource({"order-service.md": RUNBOOK})),
                memory=NoIncidents(),
            )
            results["every"] = await investigate(tools, count)
    results["ratio"] = results["every"]["total"] / results["two"]["total"]
    return results


def markdown(results: dict[str, Any]) -> str:
    """The suite's section: per configuration, tokens per turn, the whole investigation and its split, and the
    tools each turn offered in full."""
    lines = [
        "### (t) Prompt tokens by configuration",
        f"One investigation ({' → '.join(name for name, _ in TURNS)}) on the demo incident's recordings, the model a "
        f"recording server on the OpenAI wire; tokens: {results['method']}.",
        "",
        "| configuration | tools | turn 1 | turn 2 | turn 3 | investigation | system | schemas | conversation "
        "| observations |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, label in (("two", "metrics and logs"), ("every", "every family")):
        run = results[key]
        per_turn = " | ".join(f"{sum(turn.values()):,}" for turn in run["turns"])
        split_of = " | ".join(f"{run['parts'][part]:,} ({run['parts'][part] / run['total']:.0%})" for part in PARTS)
        lines.append(f"| {label} | {run['tools']} | {per_turn} | {run['total']:,} | {split_of} |")
    ok = results["ratio"] <= RATIO_TARGET
    lines += [
        "",
        f"Every family / metrics and logs: {results['ratio']:.2f} (target ≤ {RATIO_TARGET}): {'PASS' if ok else '**MISS**'}.",
    ]
    lines += ["", "Offered in full, by turn:"]
    lines += [
        f"- {label}: " + "; ".join(f"{', '.join(names)}" for names in results[key]["offered"])
        for key, label in (("two", "metrics and logs"), ("every", "every family"))
    ]
    return "\n".join(lines)
