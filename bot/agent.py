"""Building the agent from the configuration: the model it names, its tools, and an `Agent` with its budgets.

The one way every command and the Slack bot get their agent, so each reads the same keys the same way.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from bot.settings import LLMSettings, Settings
from bot.verification.symptoms import SymptomChecker
from kernel import (
    LLM,
    Agent,
    AnthropicLLM,
    ConfirmHook,
    OpenAICompatibleLLM,
    RetryPolicy,
    SideEffectMode,
    SideEffectPolicy,
    ToolRegistry,
)
from opsagent_tools.mcp import McpConnections
from opsagent_tools.metrics import MetricsFamily
from opsagent_tools.runbooks import RunbookLibrary
from opsagent_tools.toolset import build_tools

PREVIEW_MODES = frozenset({SideEffectMode.READ_ONLY, SideEffectMode.DRY_RUN})
"""Policies that never send an action: the action webhook needs no signing secret under them."""
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5"
NO_MODEL = (
    "no model is configured: add an [llm] section, or set OPSAGENT_LLM_MODEL (with OPSAGENT_LLM_BASE_URL for a local "
    "server), OPENAI_API_KEY or ANTHROPIC_API_KEY"
)


def build_agent(
    settings: Settings | None,
    *,
    llm: LLM,
    tools: ToolRegistry,
    confirm: ConfirmHook | None = None,
    policy: SideEffectPolicy | None = None,
    salvage: bool = True,
) -> Agent:
    """The agent on `llm` and `tools` with the configured budget, context, prices and side-effect policy.

    `settings` None: the kernel's defaults (the offline demo). `policy` overrides the configured one (an
    evaluation or a replay never acts on the world); `salvage=False` skips the summary turn of a failed run.
    """
    if settings is None:
        return Agent(llm=llm, tools=tools, policy=policy or SideEffectPolicy(), confirm=confirm, salvage=salvage)
    return Agent(
        llm=llm,
        tools=tools,
        budget=settings.budget,
        policy=policy or settings.policy,
        confirm=confirm,
        context=settings.context,
        prices=settings.llm.prices if settings.llm else {},
        salvage=salvage,
    )


@dataclass(frozen=True)
class Toolset:
    """The tools a command offers, the runbook library they read, and the MCP servers behind some of them."""

    tools: ToolRegistry
    runbooks: RunbookLibrary | None
    """None without `[knowledge]` runbooks; the command also names its runbooks to the model at a run's start."""
    mcp: McpConnections
    """Connected for as long as the toolset is open; `report()` says which servers started."""
    symptoms: SymptomChecker | None = None
    """What reads a symptom again to check an approved action: the metrics family, when `[tools.metrics]` is set."""


@asynccontextmanager
async def opened_toolset(
    settings: Settings,
    *,
    policy: SideEffectPolicy | None = None,
    environ: Mapping[str, str] = os.environ,
    **options: Any,
) -> AsyncIterator[Toolset]:
    """The configured tools, with the runbook tools and the tools of the MCP servers that started, connected for
    the duration of the block. Under a policy that never sends an action (`policy`, else the configured one)
    the action tools are there for their previews and need no signing secret. `options` go to `build_tools`."""
    runbooks = RunbookLibrary.from_settings(settings.knowledge)
    previews_only = (policy or settings.policy).mode in PREVIEW_MODES
    async with McpConnections(settings.tools.mcp, environ) as mcp:
        tools = build_tools(
            settings.tools,
            runbooks=runbooks,
            mcp=mcp,
            environ=environ,
            previews_only=previews_only,
            links=settings.links,
            **options,
        )
        yield Toolset(tools, runbooks, mcp, symptom_checker(settings))


def symptom_checker(settings: Settings) -> SymptomChecker | None:
    """What reads a symptom again to check an approved action: the metrics family `[tools.metrics]` configures, on
    the tools' clock; None without it (a check then says there is no metric to re-check)."""
    metrics = settings.tools.metrics
    return MetricsFamily(metrics, now=settings.tools.clock(), links=settings.links) if metrics else None


def require_llm(settings: Settings, *, instead: str = "") -> LLM:
    """The configured model; a ValueError naming what to set when there is none (`instead`: another way out)."""
    llm = build_llm(settings.llm)
    if llm is None:
        raise ValueError(NO_MODEL + (f"; or {instead}" if instead else ""))
    return llm


def build_llm(
    settings: LLMSettings | None, environ: Mapping[str, str] = os.environ, *, retry: RetryPolicy | None = None
) -> LLM | None:
    """The configured model, or the one the environment names, or None when neither names one.

    An `api_key_env` that names an unset variable is a ValueError: a key the operator meant to use is missing.
    `retry` replaces the adapters' retry policy (`opsagent check` tries once)."""
    if environ.get("OPSAGENT_MODEL") and not environ.get("OPSAGENT_LLM_MODEL"):
        environ = {**environ, "OPSAGENT_LLM_MODEL": environ["OPSAGENT_MODEL"]}
    options = {"retry": retry} if retry is not None else {}
    if settings is not None:
        key_env = settings.api_key_env
        if key_env is not None and not environ.get(key_env, "").strip():
            raise ValueError(
                f"[llm] api_key_env names {key_env}, which is not set: export {key_env}=<your key>, "
                "or remove api_key_env to use the default variables"
            )
        if settings.provider == "anthropic":
            key_env = key_env or "ANTHROPIC_API_KEY"
            return AnthropicLLM(
                model=settings.model,
                api_key=environ.get(key_env) or None,
                api_key_env=key_env,
                temperature=settings.temperature,
                native_tools=settings.native_tools,
                **({"base_url": settings.base_url} if settings.base_url else {}),
                **options,
            )
        return OpenAICompatibleLLM.from_env(
            {**environ, "OPSAGENT_LLM_MODEL": settings.model},
            temperature=settings.temperature,
            native_tools=settings.native_tools,
            **({"base_url": settings.base_url} if settings.base_url else {}),
            **({"api_key": environ[key_env], "api_key_env": key_env} if key_env else {}),
            **options,
        )
    if environ.get("ANTHROPIC_API_KEY") and not (environ.get("OPENAI_API_KEY") or environ.get("OPSAGENT_LLM_BASE_URL")):
        return AnthropicLLM.from_env({"OPSAGENT_LLM_MODEL": DEFAULT_ANTHROPIC_MODEL, **environ}, **options)
    if any(
        environ.get(name)
        for name in ("OPSAGENT_LLM_MODEL", "OPSAGENT_LLM_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")
    ):
        return OpenAICompatibleLLM.from_env({"OPSAGENT_LLM_MODEL": DEFAULT_OPENAI_MODEL, **environ}, **options)
    return None
