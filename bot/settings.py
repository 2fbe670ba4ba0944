"""OpsAgent's configuration: one TOML file (path from `OPSAGENT_CONFIG`), secrets from the environment.

The file names backends, metric aliases, repositories, runbooks, the action webhook, the side-effect policy, the
budgets and the model; environment variables (`OPSAGENT_<SECTION>__<KEY>`) override it. A mistake in either is
reported as a person wrote it: the file or the variable, the key path, the bad value, and the nearest valid key.
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from bot.access.settings import AccessSettings
from bot.alerts.settings import TOKEN_ENV as ALERTMANAGER_TOKEN_ENV
from bot.alerts.settings import AlertmanagerSettings
from bot.api.settings import ApiSettings
from bot.slack.settings import SlackSettings
from bot.store.settings import StoreSettings
from bot.verification.settings import VerificationSettings
from bot.viewer.settings import ViewerSettings
from kernel import DEFAULT_REDACTOR, Budget, ContextPolicy, Pricing, SideEffectPolicy
from opsagent_tools.links import LinkSettings
from opsagent_tools.memory import MemorySettings
from opsagent_tools.runbooks import RunbookSettings
from opsagent_tools.toolset import ToolsSettings

CONFIG_ENV = "OPSAGENT_CONFIG"
DEFAULT_CONFIG = Path("opsagent.toml")
ENV_PREFIX = "OPSAGENT_"
ENV_NESTING = "__"
SHORT_LLM_VARIABLES = {"OPSAGENT_LLM_MODEL": "model", "OPSAGENT_LLM_BASE_URL": "base_url"}
"""The model's short variables, which the adapters read when there is no [llm] section; with one, they override
its keys as `OPSAGENT_LLM__MODEL` would: the environment wins over the file for every key."""
VALUE_CHARS = 60
READ_BY_NAME = frozenset(
    {
        CONFIG_ENV,
        "OPSAGENT_DEBUG",  # bot/cli/main.py: show a bug's traceback
        "OPSAGENT_LLM_MODEL",  # the model adapters (kernel/adapters), with no [llm] section or over it
        "OPSAGENT_LLM_BASE_URL",
        "OPSAGENT_LLM_API_KEY",
        "OPSAGENT_LLM_API_VERSION",  # Azure OpenAI
        "OPSAGENT_MODEL",  # bot/agent.py: the older name of OPSAGENT_LLM_MODEL
        ALERTMANAGER_TOKEN_ENV,
        "OPSAGENT_VIEWER_SECRET",  # bot/viewer: signs the trace viewer's links
        "OPSAGENT_API_TOKENS",  # bot/api: the API's bearer tokens
        "OPSAGENT_ACTION_SECRET",  # [tools.actions.webhook] secret_env's default
        "OPSAGENT_DEMO_ACTION_SECRET",  # the demo's webhook, named by the opsagent.toml `demo --keep` writes
        "OPSAGENT_EVAL_NEVER_SENT",  # bot/eval: the catalogue's webhook secret, never set
    }
)
"""The OPSAGENT_ variables that are not settings: secrets and switches the code reads by name. Any other
OPSAGENT_ variable must be a setting (`OPSAGENT_<SECTION>__<KEY>`) or one the configuration names (`*_env`)."""


class KnowledgeSettings(RunbookSettings, MemorySettings):
    """`[knowledge]`: what the agent knows before it looks: the runbooks (a directory or a repository kept in sync)
    and the memory of past incidents (in the run store), with their own keys."""


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

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter=ENV_NESTING, extra="forbid")
    environ: ClassVar[Mapping[str, str]] = os.environ
    """The environment the short model variables are read from (`load_settings` sets it)."""

    llm: LLMSettings | None = None
    """Absent: the model comes from the environment (OPSAGENT_LLM_*, OPENAI_*, ANTHROPIC_API_KEY)."""
    budget: Budget = Field(default_factory=Budget)
    policy: SideEffectPolicy = Field(default_factory=SideEffectPolicy)
    """Read-only unless set: `mode = "dry_run" | "allowlist" | "full"`; side effects always need an approval."""
    context: ContextPolicy = Field(default_factory=ContextPolicy)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    links: LinkSettings = Field(default_factory=LinkSettings)
    """Where people see each observation at its source: public Prometheus, Grafana, Kibana and git web addresses."""
    knowledge: KnowledgeSettings = Field(default_factory=KnowledgeSettings)
    """What the agent knows before it looks: `runbooks` (a directory) or `runbooks_git` (a repository kept in sync),
    and the memory of past incidents (`memory`, `memory_days`)."""
    slack: SlackSettings = Field(default_factory=SlackSettings)
    alertmanager: AlertmanagerSettings | None = None
    """Absent: no `POST /alertmanager`. Present: firing alert groups open investigations in its channel."""
    viewer: ViewerSettings | None = None
    """Absent: no trace viewer. Present: `GET /runs/<id>` pages, linked from each thread (needs OPSAGENT_VIEWER_SECRET)."""
    store: StoreSettings = Field(default_factory=StoreSettings)
    """Where runs are saved: SQLite by default (one process), PostgreSQL for several replicas."""
    access: AccessSettings = Field(default_factory=AccessSettings)
    """Who may start investigations, how many and how often, and the daily spend cap."""
    api: ApiSettings = Field(default_factory=ApiSettings)
    """The HTTP API and MCP server for other agents and tools (`enabled = true`, tokens in OPSAGENT_API_TOKENS)."""
    verification: VerificationSettings = Field(default_factory=VerificationSettings)
    """Whether and when an approved action is checked after it ran (did the symptom go away?)."""

    @model_validator(mode="before")
    @classmethod
    def _short_llm_variables(cls, data: Any) -> Any:
        llm = data.get("llm") if isinstance(data, dict) else None
        if not isinstance(llm, dict):
            return data
        overrides = {
            key: cls.environ[name]
            for name, key in SHORT_LLM_VARIABLES.items()
            if cls.environ.get(name, "").strip() and not cls.environ.get(f"{ENV_PREFIX}LLM{ENV_NESTING}{key.upper()}")
        }
        return {**data, "llm": {**llm, **overrides}} if overrides else data

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


class ConfigError(ValueError):
    """The configuration cannot be used: one line per problem, each naming where it is and what to write."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = tuple(problems)


def load_settings(path: Path | None = None, environ: Mapping[str, str] = os.environ) -> Settings:
    """Read the configuration: `path`, else `$OPSAGENT_CONFIG`, else `./opsagent.toml` if present, else defaults.

    A `ConfigError` names each problem as a person wrote it (file or environment variable, key, value)."""
    chosen = path or (Path(environ[CONFIG_ENV]) if environ.get(CONFIG_ENV) else None)
    if chosen is not None and not chosen.is_file():
        raise ConfigError([f"configuration file {chosen} does not exist (from {'--config' if path else CONFIG_ENV})"])
    if chosen is None and DEFAULT_CONFIG.is_file():
        chosen = DEFAULT_CONFIG

    class FromFile(Settings):
        model_config = SettingsConfigDict(toml_file=chosen)

    FromFile.environ = environ
    try:
        settings = FromFile()
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{chosen}: not valid TOML: {exc}"]) from None
    except ValidationError as exc:
        raise ConfigError(describe_errors(exc.errors(), file=chosen, environ=environ)) from None
    if unknown := unknown_variables(settings, environ):
        raise ConfigError(unknown)
    return settings


def unknown_variables(settings: Settings, environ: Mapping[str, str]) -> list[str]:
    """One line per OPSAGENT_ variable that sets nothing, naming the nearest that would: pydantic-settings reads
    only the sections it knows, so a misspelled section would otherwise be ignored without a word. Secrets the
    code reads by name (`READ_BY_NAME`) and the variables the configuration names (`*_env`) are not settings."""
    named = {name.upper() for name in _named_variables(settings)}
    problems = []
    for name in environ:
        upper = name.upper()
        section = upper[len(ENV_PREFIX) :].partition(ENV_NESTING)[0].lower()
        if upper.startswith(ENV_PREFIX) and upper not in READ_BY_NAME | named and section not in Settings.model_fields:
            # compared without the prefix, which every candidate shares and would make any two names look alike
            known = [*READ_BY_NAME, *named, *_setting_variables(Settings, ENV_PREFIX, depth=3)]
            tails = {candidate[len(ENV_PREFIX) :]: candidate for candidate in known if candidate.startswith(ENV_PREFIX)}
            close = difflib.get_close_matches(upper[len(ENV_PREFIX) :], tails, n=1, cutoff=0.8)
            hint = (
                f" (did you mean {tails[close[0]]}?)"
                if close
                else f": a setting is {ENV_PREFIX}<SECTION>{ENV_NESTING}<KEY>, e.g. {ENV_PREFIX}POLICY{ENV_NESTING}MODE"
            )
            problems.append(f"environment variable {name}: no setting or secret has this name{hint}")
    return problems


def _named_variables(node: object, *, named: bool = False) -> Iterator[str]:
    """The environment variables the loaded configuration names: `api_key_env`, `secret_env`, `token_env`, an MCP
    server's `env` and `headers_env`."""
    match node:
        case str() if named:
            yield node
        case BaseModel():
            for field in type(node).model_fields:
                yield from _named_variables(getattr(node, field), named=field == "env" or field.endswith("_env"))
        case dict():
            for value in node.values():
                yield from _named_variables(value, named=named)
        case list() | tuple():
            for value in node:
                yield from _named_variables(value, named=named)


def _setting_variables(model: type[BaseModel], prefix: str, *, depth: int) -> Iterator[str]:
    """The variable of every key of `model`, and of its sections' keys down to `depth` levels."""
    for name, field in model.model_fields.items():
        variable = prefix + name.upper()
        yield variable
        inner = _model_in(field.annotation)
        if inner is not None and depth > 1:
            yield from _setting_variables(inner, variable + ENV_NESTING, depth=depth - 1)


def describe_errors(errors: Sequence[ErrorDetails], *, file: Path | None, environ: Mapping[str, str]) -> list[str]:
    """Each validation error as one line: where it came from, the key path, the bad value, what is valid."""
    env_paths = _environment_paths(environ)
    described = [_describe(error, file=file, env_paths=env_paths) for error in errors]
    suggested = {(where, section, hint) for where, section, _, hint in described if hint}
    return [
        line
        for where, section, line, _ in described
        # "missing `url`" beside "unknown `urll` (did you mean `url`?)" is the same mistake: say it once
        if not any(w == where and s == section and line.endswith(f"missing key `{h}`") for w, s, h in suggested)
    ]


def _describe(
    error: ErrorDetails, *, file: Path | None, env_paths: Mapping[tuple[str, ...], str]
) -> tuple[str, str, str, str]:
    """(where, section, the line, the suggested key or "")."""
    keys, parent = _key_path(error["loc"])
    variable = next((name for prefix, name in env_paths.items() if keys[: len(prefix)] == list(prefix)), None)
    where = f"environment variable {variable}" if variable else str(file or "the configuration")
    section = f"[{'.'.join(keys[:-1])}] " if len(keys) > 1 else ""
    key = keys[-1] if keys else ""
    message = _person_message(error)
    match error["type"]:
        case "extra_forbidden":
            hint = _nearest(key, _valid_keys(parent))
            table = not section and isinstance(error["input"], dict)
            unknown, meant = (f"section [{key}]", f"[{hint}]") if table else (f"key `{key}`", f"`{hint}`")
            advice = f" (did you mean {meant}?)" if hint else _listing(_valid_keys(parent))
            if hint and variable:
                advice = f" (did you mean {meant}: {_variable([*keys[:-1], hint])}?)"
            return where, section, f"{where}: {section}unknown {unknown}{advice}", hint
        case "missing":
            return where, section, f"{where}: {section}missing key `{key}`", ""
        case _ if keys and isinstance(error["input"], dict):
            return where, section, f"{where}: [{'.'.join(keys)}] {message}", ""
        case _ if keys:
            return where, section, f"{where}: {section}{key} = {_shown(error['input'])}: {message}", ""
        case _:
            return where, section, f"{where}: {message}", ""


def _key_path(loc: Sequence[str | int]) -> tuple[list[str], Any]:
    """The keys a person wrote (pydantic's names of union members and validators left out), and the model
    the last key belongs to (where the valid keys are)."""
    node: Any = Settings
    parent: Any = Settings
    keys: list[str] = []
    for part in loc:
        if _is_member_tag(part, node):
            continue
        model, mapping = _model_in(node), _mapping_value(node)
        if model is not None and isinstance(part, str):
            field = model.model_fields.get(part)
            parent, node = model, field.annotation if field is not None else Any
            keys.append(part)
        elif mapping is not None:
            parent, node = None, mapping
            keys.append(str(part))
        elif isinstance(part, int) and keys:
            keys[-1] = f"{keys[-1]}[{part}]"
            node = (get_args(node) or (Any,))[0]
        else:
            keys.append(str(part))
    return keys, parent


def _is_member_tag(part: str | int, node: Any) -> bool:
    """Whether a path element is pydantic naming a union member or a validator rather than a key."""
    text = str(part)
    if "[" in text:
        return True
    members = get_args(node) if get_origin(node) in (Union, types.UnionType) else ()
    names = {getattr(m, "__name__", "") for m in members if m is not type(None)}
    return text in names or (len(names) > 1 and text in {"str", "int", "float", "bool", "dict", "list"})


def _model_in(node: Any) -> type[BaseModel] | None:
    """The model a (possibly optional or annotated) type is, or holds as a union member."""
    if get_origin(node) is Annotated:
        return _model_in(get_args(node)[0])
    if isinstance(node, type) and issubclass(node, BaseModel):
        return node
    if get_origin(node) in (Union, types.UnionType):
        return next((m for m in map(_model_in, get_args(node)) if m is not None), None)
    return None


def _mapping_value(node: Any) -> Any:
    """The value type of a mapping type (maybe optional), else None."""
    if get_origin(node) in (Union, types.UnionType):
        return next((v for v in map(_mapping_value, get_args(node)) if v is not None), None)
    if get_origin(node) is dict:
        return get_args(node)[1]
    return None


def _valid_keys(parent: Any) -> list[str]:
    return list(parent.model_fields) if isinstance(parent, type) and issubclass(parent, BaseModel) else []


def _nearest(key: str, valid: Sequence[str]) -> str:
    close = difflib.get_close_matches(key.lower(), valid, n=1, cutoff=0.6)
    return close[0] if close else ""


def _listing(valid: Sequence[str]) -> str:
    return f" (valid keys: {', '.join(valid)})" if valid else ""


def _person_message(error: ErrorDetails) -> str:
    """pydantic's message in our words: no "Value error," or "Input", lower-case start."""
    message = error["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if message.startswith("Input should be a valid dictionary"):
        return "should be a table of keys"
    message = message.removeprefix("Input ")
    return message[:1].lower() + message[1:] if message[:2] != message[:2].upper() else message


def _shown(value: Any) -> str:
    """A bad value as TOML-ish text, redacted and cut short."""
    text = DEFAULT_REDACTOR.redact(json.dumps(value, default=str, ensure_ascii=False))
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _environment_paths(environ: Mapping[str, str]) -> dict[tuple[str, ...], str]:
    """The key path each `OPSAGENT_<SECTION>__<KEY>` variable sets, longest first."""
    paths = {
        tuple(part.lower() for part in name[len(ENV_PREFIX) :].split(ENV_NESTING)): name
        for name in environ
        if name.upper().startswith(ENV_PREFIX) and name.upper() != CONFIG_ENV
    }
    return dict(sorted(paths.items(), key=lambda item: -len(item[0])))


def _variable(keys: Sequence[str]) -> str:
    return ENV_PREFIX + ENV_NESTING.join(key.upper() for key in keys)
