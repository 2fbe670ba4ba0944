"""OpsAgent's configuration: one TOML file (path from `OPSAGENT_CONFIG`), secrets from the environment.

The file names backends, metric aliases, repositories, runbooks, the action webhook, the side-effect
policy, the budgets and the model; environment variables (`OPSAGENT_<SECTION>__<KEY>`) override it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from bot.access.settings import AccessSettings
from bot.alerts.settings import AlertmanagerSettings
from bot.slack.settings import SlackSettings
from bot.store.settings import StoreSettings
from bot.viewer.settings import ViewerSettings
from kernel import Budget, ContextPolicy, Pricing, SideEffectPolicy
from opsagent_tools.runbooks import RunbookSettings
from opsagent_tools.toolset import ToolsSettings

CONFIG_ENV = "OPSAGENT_CONFIG"
DEFAULT_CONFIG = Path("opsagent.toml")


class LLMSettings(BaseModel):
    """The model. Keys never live in the file: `api_key_env` names the variable that holds one."""

    model_config = ConfigDict(extra="forbid")

    provider: Literal["openai", "anthropic"] = "openai"
    """`openai` covers every OpenAI-compatible endpoint: OpenAI, Azure OpenAI, vLLM, Ollama, LiteLLM."""
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    """Defaults to OPSAGENT_LLM_API_KEY / OPENAI_API_KEY, or ANTHROPIC_API_KEY."""
    temperature: float = 0.0
    native_tools: bool = True
    """False forces the text protocol (for models whose function calling is unreliable)."""
    prices: dict[str, Pricing] = Field(default_factory=dict)
    """USD per million tokens by model name, for cost reporting and `budget.max_cost_usd`."""


class Settings(BaseSettings):
    """Everything `opsagent` reads from `opsagent.toml`."""

    model_config = SettingsConfigDict(env_prefix="OPSAGENT_", env_nested_delimiter="__", extra="forbid")

    llm: LLMSettings | None = None
    """Absent: the model comes from the environment (OPSAGENT_LLM_*, OPENAI_*, ANTHROPIC_API_KEY)."""
    budget: Budget = Field(default_factory=Budget)
    policy: SideEffectPolicy = Field(default_factory=SideEffectPolicy)
    """Read-only unless set: `mode = "dry_run" | "allowlist" | "full"`; side effects always need an approval."""
    context: ContextPolicy = Field(default_factory=ContextPolicy)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    knowledge: RunbookSettings = Field(default_factory=RunbookSettings)
    """What the agent knows before it looks: `runbooks` (a directory) or `runbooks_git` (a repository kept in sync)."""
    slack: SlackSettings = Field(default_factory=SlackSettings)
    alertmanager: AlertmanagerSettings | None = None
    """Absent: no `POST /alertmanager`. Present: firing alert groups open investigations in its channel."""
    viewer: ViewerSettings | None = None
    """Absent: no trace viewer. Present: `GET /runs/<id>` pages, linked from each thread (needs OPSAGENT_VIEWER_SECRET)."""
    store: StoreSettings = Field(default_factory=StoreSettings)
    """Where runs are saved: SQLite by default (one process), PostgreSQL for several replicas."""
    access: AccessSettings = Field(default_factory=AccessSettings)
    """Who may start investigations, how many and how often, and the daily spend cap."""

    @model_validator(mode="after")
    def _spend_cap_has_a_price(self) -> Settings:
        if self.access.daily_spend_usd is not None and (self.llm is None or self.llm.model not in self.llm.prices):
            model = self.llm.model if self.llm else "the model"
            raise ValueError(
                f'access.daily_spend_usd needs a price for {model}: add [llm.prices."{model}"] with '
                "input_per_mtok and output_per_mtok, or remove the cap"
            )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = settings_cls.model_config.get("toml_file")
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=toml_file))


def load_settings(path: Path | None = None, environ: Mapping[str, str] = os.environ) -> Settings:
    """Read the configuration: `path`, else `$OPSAGENT_CONFIG`, else `./opsagent.toml` if present, else defaults."""
    chosen = path or (Path(environ[CONFIG_ENV]) if environ.get(CONFIG_ENV) else None)
    if chosen is not None and not chosen.is_file():
        raise ValueError(f"configuration file {chosen} does not exist (from {'--config' if path else CONFIG_ENV})")
    if chosen is None and DEFAULT_CONFIG.is_file():
        chosen = DEFAULT_CONFIG

    class FromFile(Settings):
        model_config = SettingsConfigDict(toml_file=chosen)

    return FromFile()
