"""`opsagent demo`: the order-service incident, investigated end to end with no account and no network.

The backends are real (recorded metrics, log files, a git repository) and generated fresh for each run; the
model is a clearly labelled scripted one unless a model is asked for. `--keep DIR` leaves the backends and an
opsagent.toml that reads them, so every other command works on the demo afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import shutil
import signal
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from aiohttp import web

from bot.agent import build_agent
from bot.cli.session import watch
from bot.cli.terminal import Terminal
from bot.cli.terminal_approval import TerminalApprover
from kernel import (
    LLM,
    ConfirmHook,
    RunResult,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    text_turn,
)
from opsagent_tools.demo_cluster import KUBECONFIG, RECORDING, ServedCluster
from opsagent_tools.demo_incident import DEMO_SECRET_ENV, write_demo_incident
from opsagent_tools.metrics import DEFAULT_ALIASES
from opsagent_tools.toolset import ToolsSettings, build_tools

DEMO_TASK = "order-service 5xx went from 0.1% to 12% in 3 minutes, find the root cause"
OFFLINE_BANNER = (
    "OFFLINE DEMO MODEL: a scripted, deterministic stand-in for an LLM. The tools, data and approvals are real.\n"
    "To run it on a real model: opsagent demo --model-from-config (the [llm] section, or OPSAGENT_LLM_MODEL, "
    "OPENAI_API_KEY or ANTHROPIC_API_KEY)."
)
KEPT_CONFIG = "opsagent.toml"
K8S_TRY = 'opsagent --config {config} tools call k8s_pods --args \'{{"workload": "order-service"}}\''
"""The first command to try on the demo's cluster."""
SERVING_STOPS = (signal.SIGINT, signal.SIGTERM)


async def run_demo(
    llm: LLM | None, *, terminal: Terminal, confirm: ConfirmHook | None = None, keep: Path | None = None
) -> RunResult:
    """Generate the incident, serve a stand-in deployment webhook and the incident's cluster, and investigate;
    returns the trace.

    Approvals are asked on the terminal unless another `confirm` hook is given. `keep`: an empty (or new)
    directory that keeps the backends and an opsagent.toml reading them; by default they are removed.
    """
    terminal.say(OFFLINE_BANNER if llm is None else f"Model: {llm.model}", style="bold magenta")
    with _demo_directory(keep) as root:
        async with contextlib.AsyncExitStack() as served:
            webhook = await served.enter_async_context(DemoDeploymentWebhook())
            data = root / "data"
            recorded = write_demo_incident(data, datetime.now(UTC), action_url=webhook.url)
            cluster = await served.enter_async_context(ServedCluster(data / RECORDING, data / KUBECONFIG))
            tools_settings = recorded.model_copy(update={"kubernetes": cluster.settings})
            if keep is not None:
                write_kept_config(root / KEPT_CONFIG, tools_settings)
            tools = build_tools(tools_settings, environ={DEMO_SECRET_ENV: webhook.secret})
            policy = SideEffectPolicy(mode=SideEffectMode.FULL)
            agent = build_agent(
                None,
                llm=llm or demo_script(),
                tools=tools,
                policy=policy,
                confirm=confirm or TerminalApprover(terminal),
            )
            return await watch(lambda control: agent.events(DEMO_TASK, control=control), terminal)


@contextlib.contextmanager
def _demo_directory(keep: Path | None) -> Iterator[Path]:
    """Where the demo writes: a temporary directory, or `keep` (new or empty). A demo that fails removes what it
    wrote in `keep`, and the directories it made for it: nothing half-written is left to be mistaken for a demo."""
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="opsagent-demo-") as root:
            yield Path(root)
        return
    if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
        raise ValueError(f"--keep {keep}: choose a new or empty directory (this one is not empty)")
    made = next((directory for directory in [*reversed(keep.parents), keep] if not directory.exists()), None)
    keep.mkdir(parents=True, exist_ok=True)
    try:
        yield keep
    except BaseException:  # an interrupt too: the directory would be as half-written
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        else:  # the person's own empty directory: emptied, kept
            for written in keep.iterdir():
                if written.is_dir() and not written.is_symlink():
                    shutil.rmtree(written)
                else:
                    written.unlink()
        raise


def write_kept_config(path: Path, tools: ToolsSettings) -> None:
    """The opsagent.toml `--keep` leaves: the demo's backends, side effects as dry runs (the stand-in deployment
    system is gone with the demo)."""
    path.write_text(
        "# The demo incident's backends, kept by `opsagent demo --keep`: recorded metrics, log files, a git\n"
        "# repository and a cluster. Try:\n"
        f'#   opsagent --config {path} tools call query_metrics --args \'{{"service": "gateway"}}\'\n'
        f"# The cluster answers while `opsagent demo --serve-kubernetes {path.parent}` serves it; then try:\n"
        f"#   {K8S_TRY.format(config=path)}\n\n"
        "[policy]\n"
        'mode = "dry_run"   # the demo\'s deployment system ran only during the demo: actions show what they would send\n\n'
        + demo_tools_toml(tools),
        encoding="utf-8",
    )


def demo_tools_toml(tools: ToolsSettings) -> str:
    """The `[tools.*]` sections of the demo's backends as an operator would write them (the metric aliases that
    differ from the built-in ones, the files, the repositories, the webhook, the recording's time)."""
    lines = ["[tools]"]
    if tools.recorded_at is not None:
        lines.append(f'recorded_at = {_quoted(tools.recorded_at.isoformat())}   # a recording: the tools\' "now"')
    if tools.metrics is not None:
        lines += ["", "[tools.metrics]", f"url = {_quoted(tools.metrics.url)}"]
        for name, alias in tools.metrics.aliases.items():
            if DEFAULT_ALIASES.get(name) != alias:
                lines += ["", f"[tools.metrics.aliases.{name}]", f"promql = {_quoted(alias.promql)}"]
                lines += [f"unit = {_quoted(alias.unit)}"] if alias.unit else []
                lines.append(f"description = {_quoted(alias.description)}")
    if tools.logs is not None and tools.logs.files is not None:
        lines += ["", "[tools.logs]", f"backend = {_quoted(tools.logs.backend)}", "", "[tools.logs.files]"]
        lines.append(f"directory = {_quoted(str(tools.logs.files.directory))}")
    if tools.repos is not None:
        lines += ["", "[tools.repos.repositories]"]
        lines += [f"{name} = {_quoted(str(repo.path))}" for name, repo in tools.repos.repositories.items() if repo.path]
    if tools.kubernetes is not None and tools.kubernetes.kubeconfig is not None:
        lines += ["", "[tools.kubernetes]", f"kubeconfig = {_quoted(str(tools.kubernetes.kubeconfig))}"]
        lines.append(f"namespaces = {json.dumps(list(tools.kubernetes.namespaces))}")
    if tools.actions is not None:
        webhook = tools.actions.webhook
        lines += ["", "[tools.actions.webhook]", f"url = {_quoted(webhook.url)}"]
        lines.append(f"secret_env = {_quoted(webhook.secret_env)}")
    return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


async def serve_kept_cluster(kept: Path, terminal: Terminal, *, port: int = 0) -> int:
    """Serve the cluster `opsagent demo --keep` recorded in `kept` until Ctrl-C (or SIGTERM), its kubeconfig
    rewritten to reach it, so the kept opsagent.toml's Kubernetes tools answer; 0 once stopped."""
    data = kept / "data"
    if not (data / RECORDING).is_file():
        raise ValueError(
            f"--serve-kubernetes {kept}: no demo cluster is kept there: keep one first with opsagent demo --keep {kept}"
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for stopping in SERVING_STOPS:
        loop.add_signal_handler(stopping, stop.set)
    try:
        async with ServedCluster(data / RECORDING, data / KUBECONFIG, port=port) as cluster:
            config = kept / KEPT_CONFIG
            terminal.say(
                f"serving the demo's cluster at {cluster.url} until Ctrl-C; from another shell, try:", style="bold"
            )
            for command in (
                K8S_TRY.format(config=config),
                f'opsagent --config {config} tools call k8s_events --args \'{{"object": "order-service"}}\'',
                f'opsagent --config {config} tools call k8s_rollout_history --args \'{{"deployment": "order-service"}}\'',
            ):
                terminal.say(f"  {command}")
            terminal.flush()
            await stop.wait()
    finally:
        for stopping in SERVING_STOPS:
            loop.remove_signal_handler(stopping)
    terminal.say("stopped serving the demo's cluster")
    return 0


class DemoDeploymentWebhook:
    """A stand-in for the operator's deployment system on 127.0.0.1: it accepts signed actions."""

    def __init__(self) -> None:
        self.secret = secrets.token_hex(16)
        self.url = ""
        self.received: list[bytes] = []
        self._runner: web.AppRunner | None = None

    async def __aenter__(self) -> DemoDeploymentWebhook:
        app = web.Application()
        app.router.add_post("/actions", self._accept)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/actions"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _accept(self, request: web.Request) -> web.Response:
        self.received.append(await request.read())
        return web.json_response({"status": "queued", "message": "demo deployment system: rollback queued"}, status=202)


def demo_script() -> ScriptedModel:
    """What a good model does on the demo incident, turn by turn (it cites the steps it relies on)."""
    return ScriptedModel(
        [
            text_turn(
                "query_metrics",
                "Known: only the report. Missing: when and how sharply 5xx rose. Why: confirm the "
                "jump and find its start.",
                service="order-service",
                metric="http_5xx_rate",
                window="30m",
            ),
            text_turn(
                "search_logs",
                "Known: 5xx jumped about 10 minutes ago (step 1). Missing: who returns them. Why: "
                "5xx can come from the gateway in front of the service.",
                service="gateway",
                since="15m",
            ),
            text_turn(
                "search_logs",
                "Known: the gateway returns 503s on upstream connection timeouts to order-service "
                "(step 2). Missing: what order-service itself says. Why: the cause is upstream.\n"
                "Hypothesis: order-service fails behind the gateway (likely)",
                service="order-service",
                since="15m",
                level="info",
            ),
            text_turn(
                "load_tools",
                "Known: v2.14.0 rolled out just before the jump, and order-service cannot get "
                "database connections: the pool is full (step 3). Missing: the code tools' schemas. Why: the deploy "
                "lines up with the onset: compare it, read its config, and perhaps roll it back.",
                names=["compare_refs", "read_repo_file", "rollback_deployment"],
            ),
            text_turn(
                "compare_refs",
                "Known: the pool is full (step 3) since v2.14.0 rolled out. Missing: what v2.14.0 changed. Why: the "
                "deploy lines up with the onset.\nHypothesis: v2.14.0 exhausted order-service's database pool (likely)",
                base="v2.13.2",
                head="v2.14.0",
            ),
            text_turn(
                "read_repo_file",
                "Known: v2.14.0 changed config/database.yaml (step 5). Missing: the deployed pool "
                "settings in full. Why: confirm the pool size.",
                path="config/database.yaml",
                ref="v2.14.0",
            ),
            text_turn(
                "rollback_deployment",
                "Known: v2.14.0 cut the pool from 50 to 10 connections (steps 5-6), "
                "10 are in use with ~190 requests waiting (step 3), and the gateway times out (step 2). Why: rolling "
                "back restores the pool fastest.\nHypothesis: v2.14.0's pool cut causes the 5xx (confirmed)",
                service="order-service",
                to_version="v2.13.2",
            ),
            text_turn(
                "finish",
                "Known: the deploy, the pool cut, the pool exhaustion and the 503s line up (steps 1-3, 5-6).",
                summary=(
                    "Deploy v2.14.0 of order-service cut its database pool from 50 to 10 connections: requests queue "
                    "for a connection until they time out, and the gateway answers 503."
                ),
                root_cause="`pool.max_size` in `config/database.yaml` went from 50 to 10 in v2.14.0, about 11 minutes ago.",
                confidence="confirmed",
                evidence=[
                    {"claim": "5xx went from 0.1% to 12% within three minutes of the v2.14.0 rollout", "steps": [1]},
                    {"claim": "the gateway answers 503 on upstream timeouts to order-service", "steps": [2]},
                    {"claim": "all 10 pool connections are busy and ~190 requests wait for one", "steps": [3]},
                    {"claim": "v2.14.0 changed `max_size: 50` to `max_size: 10`", "steps": [5, 6]},
                ],
                ruled_out=[
                    {"hypothesis": "a fault in the gateway: it relays order-service's timeouts", "steps": [2, 3]}
                ],
                next_steps=[
                    "restore `max_size: 50` (or size pgbouncer to match) before re-deploying",
                    "alert on `db_pool_pending_requests > 0` for 2 minutes",
                    "add a config check that flags pool-size cuts",
                ],
            ),
        ]
    )
