"""Configuration: the TOML file, environment overrides, and which model the environment names."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agent import build_llm
from bot.settings import load_settings
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
