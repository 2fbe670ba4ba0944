"""The offline demo end to end: generated backends, the scripted model, the approval, the answer."""

from __future__ import annotations

import io
import json

from rich.console import Console

from bot.cli.demo import OFFLINE_BANNER, run_demo
from bot.cli.terminal import Terminal
from kernel import Approved, ErrorKind, ScriptedModel, text_turn


def captured_terminal() -> tuple[Terminal, io.StringIO]:
    """A terminal whose console writes to memory, as to a pipe (no terminal, no colour)."""
    out = io.StringIO()
    return Terminal(Console(file=out, highlight=False)), out


async def test_demo_finds_the_root_cause_and_fails_closed_without_a_terminal():
    terminal, out = captured_terminal()
    result = await run_demo(None, terminal=terminal)
    assert out.getvalue().startswith(OFFLINE_BANNER + "\n")
    assert result.ok
    assert [s.call.name for s in result.steps] == [
        "query_metrics",
        "search_logs",
        "search_logs",
        "load_tools",
        "compare_refs",
        "read_repo_file",
        "rollback_deployment",
        "finish",
    ]
    metrics, gateway, orders, loaded, diff, config, rollback, _ = result.steps
    assert loaded.observation.startswith("Loaded compare_refs, read_repo_file, rollback_deployment: offered in full")
    assert "jumped from 0.10% to 12.0%" in metrics.observation
    assert "upstream connect error or disconnect/reset before headers" in gateway.observation
    assert "Connection is not available" in orders.observation
    assert "DeployEvent: order-service v2.14.0 rolled out" in orders.observation
    assert "config/database.yaml" in diff.observation
    assert "-  max_size: 50" in diff.observation
    assert "max_size: 10" in config.observation
    assert rollback.error is ErrorKind.DENIED
    assert "there is no terminal to ask for approval" in rollback.observation
    assert "pool.max_size" in result.answer
    assert "⚠ approval needed (run " in out.getvalue()


async def test_each_demo_step_reads_in_one_line_and_recordings_have_no_links():
    result = await run_demo(None, terminal=captured_terminal()[0])
    metrics, gateway, orders, _, diff, config, rollback, _ = result.steps
    assert metrics.headline.startswith("http_5xx_rate 0.10% → 12.0% at t-")
    assert metrics.headline.endswith("▁▁▁▁▁▁▁▁▆███")
    assert gateway.headline.startswith(
        "1,140 lines · 1,140 × upstream connect error or disconnect/reset before headers"
    )
    assert orders.headline.startswith("741 lines · 683 × HikariPool-1 - Connection is not available")
    assert diff.headline == (
        "v2.13.2…v2.14.0: 3 files · config/app.yaml async_receipts false → true · config/database.yaml max_size 50 → 10"
    )
    assert config.headline == "config/database.yaml@v2.14.0 (6 lines)"
    assert rollback.headline == "", "a denied step shows its error"
    assert all(step.links == () for step in result.steps), "recorded files and a local clone have no web pages"


async def test_an_approved_rollback_reaches_the_deployment_webhook_signed():
    async def approve(request):
        return Approved(by="U_ONCALL", args_hash=request.args_hash)

    result = await run_demo(None, terminal=captured_terminal()[0], confirm=approve)
    rollback = result.steps[6]
    assert rollback.call.name == "rollback_deployment"
    assert rollback.error is None
    assert rollback.approval.by == "U_ONCALL"
    assert rollback.observation.startswith("accepted by the action webhook (HTTP 202, Idempotency-Key ")
    assert json.loads(rollback.observation.split(": ", 1)[1])["status"] == "queued"
    assert rollback.headline == "rollback order-service → v2.13.2: webhook 202"


async def test_the_demo_serves_its_cluster_to_the_run():
    """A model given the demo (`--model-from-config`) can look at the cluster: its pods crash-loop after v2.14.0."""
    model = ScriptedModel(
        [
            text_turn("k8s_pods", "Missing: the pods' state.", workload="order-service"),
            text_turn("k8s_rollout_history", "Missing: what the rollout changed.", deployment="order-service"),
            text_turn("finish", answer="order-service v2.14.0 crash-loops (steps 1-2)."),
        ]
    )
    result = await run_demo(model, terminal=captured_terminal()[0])
    pods, history, _ = result.steps
    assert pods.headline == "order-service: 1/3 ready · 2 CrashLoopBackOff (Error, 8 restarts)"
    assert "change-cause: release v2.14.0: async receipts, pool for pgbouncer" in history.observation
