"""`opsagent serve`: the Slack bot, over Socket Mode or HTTP."""

from __future__ import annotations

import argparse

from bot.cli.commands import Commands, settings_of
from bot.cli.terminal import Terminal


def register(commands: Commands) -> None:
    """Add `opsagent serve`."""
    serve = commands.add("serve", "run the Slack bot (Socket Mode by default)", run)
    serve.add_argument("--http", action="store_true", help="serve POST /slack/events over HTTP instead of Socket Mode")
    serve.add_argument("--host", default="0.0.0.0", help="the HTTP server's address (default 0.0.0.0)")
    serve.add_argument(
        "--port", type=int, default=3000, help="the HTTP server's port, in both modes for /healthz (default 3000)"
    )


async def run(args: argparse.Namespace, terminal: Terminal) -> int:
    """Serve until stopped; the bot logs (as JSON lines) rather than writing to the terminal."""
    # The Slack app, the store drivers and the tools load only here: every other command starts without them.
    import structlog

    from bot.agent import build_agent, opened_toolset, require_llm
    from bot.audit.trail import AuditTrail
    from bot.runs.memory import RunMemory
    from bot.serve import serve_slack
    from bot.slack.settings import SlackSecrets
    from bot.store.factory import opened_store
    from bot.store.journal import StoreActionJournal
    from kernel import Agent, ConfirmHook

    log = structlog.get_logger("opsagent.cli")
    settings = settings_of(args)
    llm = require_llm(settings)
    secrets = SlackSecrets.from_env()
    async with opened_store(settings.store.url) as store:
        journal = StoreActionJournal(store.side_effects, AuditTrail(store.audit))
        knowledge = settings.knowledge
        memory = RunMemory(store.memory, store.runs, days=knowledge.memory_days) if knowledge.memory else None
        async with opened_toolset(settings, journal=journal, memory=memory) as toolset:
            for report in toolset.mcp.report():  # a misconfigured server, or a tool left out, is a warning
                say = log.info if report.ok and not report.warnings else log.warning
                say("mcp_server", server=report.name, ok=report.ok, detail=report.message, left_out=report.warnings)

            def agent_for(confirm: ConfirmHook) -> Agent:
                return build_agent(settings, llm=llm, tools=toolset.tools, confirm=confirm)

            await serve_slack(
                settings,
                secrets,
                agent_for,
                tools=toolset.tools,
                store=store,
                http=args.http,
                host=args.host,
                port=args.port,
                runbooks=toolset.runbooks,
                memory=memory,
                drafter=llm,
                symptoms=toolset.symptoms,
            )
    return 0
