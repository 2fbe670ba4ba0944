"""Configuration: the TOML file, environment overrides, and which model the environment names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.agent import build_llm
from bot.settings import ConfigError, load_settings, unknown_variables
from kernel import AnthropicLLM, OpenAICompatibleLLM, SideEffectMode

EXAMPLE = Path(__file__).resolve().parents[3] / "opsagent.example.toml"


def test_the_example_configuration_loads(monkeypatch):
    settings = load_settings(EXAMPLE, environ={})
    assert settings.policy.mode is SideEffectMode.READ_ONLY
    assert settings.tools.metrics is not None
    assert settings.tools.logs is not None
    assert settings.tools.repos is not None
    assert settings.llm is not None


def test_path_from_the_environment_and_overrides(tmp_path, monkeypatch):
    config = tmp_path / "ops.toml"
    config.write_text('[budget]\nmax_steps = 12\n[policy]\nmode = "dry_run"\n')
    monkeypatch.setenv("OPSAGENT_POLICY__MODE", "full")
    settings = load_settings(environ={"OPSAGENT_CONFIG": str(config)})
    assert settings.budget.max_steps == 12
    assert settings.policy.mode is SideEffectMode.FULL


def test_a_missing_file_named_by_the_environment_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_settings(environ={"OPSAGENT_CONFIG": str(tmp_path / "none.toml")})


def test_unknown_keys_are_refused(tmp_path):
    config = tmp_path / "ops.toml"
    config.write_text("[budget]\nmax_stepz = 3\n")
    with pytest.raises(ValueError, match="max_stepz"):
        load_settings(config, environ={})


def test_the_model_comes_from_the_environment_when_not_configured():
    assert build_llm(None, {}) is None
    openai = build_llm(None, {"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})
    assert isinstance(openai, OpenAICompatibleLLM)
    assert openai.model == "gpt-4o-mini"
    local = build_llm(None, {"OPSAGENT_LLM_BASE_URL": "http://127.0.0.1:11434/v1", "OPSAGENT_LLM_MODEL": "qwen2.5"})
    assert local.model == "qwen2.5"
    anthropic = build_llm(None, {"ANTHROPIC_API_KEY": "sk-ant-x"})
    assert isinstance(anthropic, AnthropicLLM)


def test_a_configured_model_wins(tmp_path):
    config = tmp_path / "ops.toml"
    config.write_text('[llm]\nprovider = "anthropic"\nmodel = "claude-x"\napi_key_env = "MY_KEY"\n')
    llm = build_llm(load_settings(config, environ={}).llm, {"MY_KEY": "k"})
    assert isinstance(llm, AnthropicLLM)
    assert llm.model == "claude-x"


ROOT = EXAMPLE.parent
VARIABLE = re.compile(r"\bOPSAGENT_[A-Z0-9_]*[A-Z0-9]\b")


def test_a_misspelled_variable_is_an_error_naming_the_nearest_one(tmp_path):
    config = tmp_path / "ops.toml"
    config.write_text("")
    for typo, meant in [
        ("OPSAGENT_POLCY__MODE", "OPSAGENT_POLICY__MODE"),
        ("OPSAGENT_POLICY_MODE", "OPSAGENT_POLICY__MODE"),
        ("OPSAGENT_STORE_URL", "OPSAGENT_STORE__URL"),
        ("OPSAGENT_VIEWR_SECRET", "OPSAGENT_VIEWER_SECRET"),
        ("opsagent_llm_modle", "OPSAGENT_LLM_MODEL"),
    ]:
        with pytest.raises(ConfigError) as raised:
            load_settings(config, environ={typo: "x"})
        assert raised.value.problems == (
            f"environment variable {typo}: no setting or secret has this name (did you mean {meant}?)",
        )
    with pytest.raises(ConfigError, match=r"OPSAGENT_FOO: no setting or secret has this name: a setting is "):
        load_settings(config, environ={"OPSAGENT_FOO": "x"})


def test_variables_the_configuration_names_are_not_settings(tmp_path):
    """A secret the file names (`secret_env`, `token_env`, an MCP server's `env`) may be called OPSAGENT_ anything."""
    config = tmp_path / "ops.toml"
    config.write_text(
        '[tools.actions.webhook]\nurl = "http://127.0.0.1:9/a"\nsecret_env = "OPSAGENT_DEPLOY_SIGNING"\n\n'
        '[tools.mcp.servers.tracker]\ncommand = "tracker"\nenv = ["OPSAGENT_TRACKER_TOKEN"]\n'
    )
    environ = {"OPSAGENT_DEPLOY_SIGNING": "s", "OPSAGENT_TRACKER_TOKEN": "t"}
    assert load_settings(config, environ=environ).tools.actions is not None
    with pytest.raises(ConfigError, match="OPSAGENT_DEPLOY_SIGNIN: no setting or secret has this name"):
        load_settings(config, environ={"OPSAGENT_DEPLOY_SIGNIN": "s"})


def test_every_opsagent_variable_the_code_and_the_deploy_files_name_is_accepted(tmp_path):
    """Each OPSAGENT_ name written in the product or the deploy files is a setting or a secret read by name, so
    the check never refuses a variable we tell people to set (a new secret read by name must join READ_BY_NAME)."""
    sources = [path for room in ("bot", "opsagent_tools", "kernel") for path in (ROOT / room).rglob("*.py")]
    sources += [path for path in (ROOT / "deploy").rglob("*") if path.is_file()]
    sources.append(EXAMPLE)
    names = {name for path in sources for name in VARIABLE.findall(path.read_text(errors="replace"))}
    assert {"OPSAGENT_ALERTMANAGER_TOKEN", "OPSAGENT_VIEWER_SECRET", "OPSAGENT_STORE__URL"} <= names
    config = tmp_path / "ops.toml"
    config.write_text("")
    settings = load_settings(config, environ={})
    assert [problem for name in sorted(names) for problem in unknown_variables(settings, {name: "x"})] == []
