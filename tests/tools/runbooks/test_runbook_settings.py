"""`[knowledge]` in opsagent.toml: one source of runbooks, environment overrides, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import load_settings
from opsagent_tools.runbooks.library import RunbookLibrary
from opsagent_tools.runbooks.settings import RunbookSettings


def test_a_directory_of_runbooks_is_configured_and_overridable(tmp_path, monkeypatch):
    config = tmp_path / "opsagent.toml"
    config.write_text('[knowledge]\nrunbooks = "/srv/runbooks"\nsync_interval_s = 60\n')
    settings = load_settings(config, environ={})
    assert settings.knowledge.runbooks == Path("/srv/runbooks")
    assert settings.knowledge.sync_interval_s == 60
    monkeypatch.setenv("OPSAGENT_KNOWLEDGE__RUNBOOKS", "/etc/runbooks")
    assert load_settings(config, environ={}).knowledge.runbooks == Path("/etc/runbooks")


def test_without_runbooks_there_is_no_library():
    assert RunbookLibrary.from_settings(RunbookSettings()) is None
    assert RunbookLibrary.from_settings(RunbookSettings(runbooks=Path("/srv/runbooks"))) is not None


def test_both_sources_or_an_unknown_key_is_an_error_naming_it(tmp_path):
    config = tmp_path / "opsagent.toml"
    config.write_text('[knowledge]\nrunbooks = "/srv/runbooks"\nrunbooks_git = "https://git.example/rb.git"\n')
    with pytest.raises(ValueError, match="set runbooks \\(a directory\\) or runbooks_git \\(a repository\\), not both"):
        load_settings(config, environ={})
    config.write_text('[knowledge]\nrunbook = "/srv/runbooks"\n')
    with pytest.raises(ValueError, match=r"\[knowledge\] unknown key `runbook` \(did you mean `runbooks`\?\)"):
        load_settings(config, environ={})
    config.write_text('[knowledge]\nrunbooks_git = "x"\nref = "--upload-pack=evil"\n')
    with pytest.raises(ValueError, match="cannot start with '-'"):
        load_settings(config, environ={})
