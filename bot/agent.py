"""Building the agent from the configuration: the model it names and an `Agent` with its budgets and policy.

The one way every command and the Slack bot get their agent, so each reads the same keys the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from bot.settings import LLMSettings, Settings
from kernel import (
    LLM,
    Agent,
    AnthropicLLM,
    ConfirmHook,
    OpenAICompatibleLLM,
    SideEffectPolicy,
    ToolRegistry,
)

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


def require_llm(settings: Settings, *, instead: str = "") -> LLM:
    """The configured model; a ValueError naming what to set when there is none (`instead`: another way out)."""
    llm = build_llm(settings.llm)
    if llm is None:
        raise ValueError(NO_MODEL + (f"; or {instead}" if instead else ""))
    return llm


def build_llm(settings: LLMSettings | None, environ: Mapping[str, str] = os.environ) -> LLM | None:
    """The configured model, or the one the environment names, or None when neither names one."""
    if environ.get("OPSAGENT_MODEL") and not environ.get("OPSAGENT_LLM_MODEL"):
        environ = {**environ, "OPSAGENT_LLM_MODEL": environ["OPSAGENT_MODEL"]}
    if settings is not None:
        key = environ.get(settings.api_key_env, "") if settings.api_key_env else None
        if settings.provider == "anthropic":
            return AnthropicLLM(
                model=settings.model,
                api_key=key or environ.get("ANTHROPIC_API_KEY"),
                temperature=settings.temperature,
                native_tools=settings.native_tools,
                **({"base_url": settings.base_url} if settings.base_url else {}),
            )
        return OpenAICompatibleLLM.from_env(
            {**environ, "OPSAGENT_LLM_MODEL": settings.model},
            temperature=settings.temperature,
            native_tools=settings.native_tools,
            **({"base_url": settings.base_url} if settings.base_url else {}),
            **({"api_key": key} if key else {}),
        )
    if environ.get("ANTHROPIC_API_KEY") and not (environ.get("OPENAI_API_KEY") or environ.get("OPSAGENT_LLM_BASE_URL")):
        return AnthropicLLM.from_env({"OPSAGENT_LLM_MODEL": DEFAULT_ANTHROPIC_MODEL, **environ})
    if any(
        environ.get(name)
        for name in ("OPSAGENT_LLM_MODEL", "OPSAGENT_LLM_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")
    ):
        return OpenAICompatibleLLM.from_env({"OPSAGENT_LLM_MODEL": DEFAULT_OPENAI_MODEL, **environ})
    return None
