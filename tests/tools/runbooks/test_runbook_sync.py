"""Runbooks from a real git repository made by the test: cloned into a cache, fetched again when due, and on a
failed fetch the last good copy is kept (even across a restart) and said so, in the tools and `opsagent check`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.cli.main import main
from opsagent_tools.runbooks.check import check_runbooks
from opsagent_tools.runbooks.library import RunbookLibrary
from opsagent_tools.runbooks.settings import RunbookSettings
from opsagent_tools.runbooks.sync import shown_url
from samples.git_repos import commit, git, write

CHECKOUT = "---\ntitle: Checkout 5xx\nservices: [checkout]\n---\nOpen the checkout dashboard.\n"
DB = "---\ntitle: DB pool exhausted\nservices: [orders-db]\n---\nCheck the pool.\n"
BROKEN = "---\ntitle: Broken\nservice: checkout\n---\n"


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A runbook repository: checkout.md on main, tagged v1."""
    repo = tmp_path / "runbooks"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "checkout.md", CHECKOUT)
    write(repo, "README.md", "# Our runbooks\n")
    commit(repo, "First runbook", "2026-11-01T10:00:00Z")
    git(repo, "tag", "v1")
    return repo


def library_for(remote: Path, tmp_path: Path, **settings: object) -> RunbookLibrary:
    options = {"runbooks_git": str(remote), "cache_dir": tmp_path / "cache", "sync_interval_s": 0, **settings}
    library = RunbookLibrary.from_settings(RunbookSettings.model_validate(options))
    assert library is not None
    return library


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


async def test_a_repository_is_cloned_and_followed_commit_by_commit(remote, tmp_path):
    library = library_for(remote, tmp_path)
    assert (await library.index()).ids() == ["checkout"]
    first = library.status
    assert first.commit == head(remote)
    assert first.synced_at is not None
    assert first.error is None
    assert first.describe().startswith(f"1 runbook from git {remote} (main) at {head(remote)[:10]}, last synced ")

    write(remote, "db.md", DB)
    (remote / "checkout.md").unlink()
    commit(remote, "Replace the checkout runbook", "2026-11-02T10:00:00Z")
    index = await library.index()
    assert index.ids() == ["db"]
    assert library.status.commit == head(remote)


async def test_a_tag_is_followed_instead_of_the_branch(remote, tmp_path):
    write(remote, "db.md", DB)
    commit(remote, "Add db", "2026-11-02T10:00:00Z")
    library = library_for(remote, tmp_path, ref="v1")
    assert (await library.index()).ids() == ["checkout"]
    assert library.status.source == f"git {remote} (v1)"


async def test_a_failed_fetch_keeps_the_last_good_copy_and_says_so(remote, tmp_path):
    library = library_for(remote, tmp_path)
    await library.index()
    good = library.status.commit
    shutil.move(remote, tmp_path / "gone")
    index = await library.index()
    assert index.ids() == ["checkout"], "the last good copy is still searchable"
    status = library.status
    assert status.commit == good
    assert status.error is not None
    assert status.error.startswith("git fetch failed: ")
    assert "serving the last good copy" in status.describe()
    checked = await check_runbooks(library)
    assert [(r.name, r.ok) for r in checked] == [("runbooks", False)]
    assert "the last update failed (git fetch failed: " in checked[0].message

    restarted = library_for(remote, tmp_path)  # a new process, the same cache, the remote still unreachable
    assert (await restarted.index()).ids() == ["checkout"]
    assert restarted.status.commit == good
    assert restarted.status.synced_at is None
    assert "serving the last good copy" in restarted.status.describe()


async def test_a_repository_that_was_never_fetched_says_there_is_no_copy(tmp_path):
    library = library_for(tmp_path / "missing", tmp_path)
    assert len(await library.index()) == 0
    assert "and there is no copy to serve" in library.status.describe()


async def test_credentials_in_the_url_never_reach_a_message(tmp_path):
    url = "https://robot:s3cr3t-t0ken@127.0.0.1:9/ops/runbooks.git"
    assert shown_url(url) == "https://127.0.0.1:9/ops/runbooks.git"
    library = library_for(Path("/unused"), tmp_path, runbooks_git=url, git_timeout_s=20)
    await library.index()
    status = library.status
    assert status.error is not None
    assert "s3cr3t" not in status.describe()
    assert "robot" not in status.describe()
    assert status.source == "git https://127.0.0.1:9/ops/runbooks.git (main)"


async def test_a_run_start_does_not_wait_for_a_slow_sync(remote, tmp_path):
    library = library_for(remote, tmp_path, sync_interval_s=3600)
    assert len(await library.index(wait_s=0)) == 0, "the fetch has only started: what is loaded (nothing) is the answer"
    assert (await library.index()).ids() == ["checkout"], "the same fetch, finished for the next caller"


def test_check_reports_the_count_the_last_sync_and_each_skipped_file(remote, tmp_path, capsys):
    write(remote, "broken.md", BROKEN)
    commit(remote, "A broken runbook", "2026-11-02T10:00:00Z")
    config = tmp_path / "opsagent.toml"
    config.write_text(f'[knowledge]\nrunbooks_git = "{remote}"\ncache_dir = "{tmp_path / "cache"}"\n')
    code = main(["--config", str(config), "check"])
    out = capsys.readouterr().out
    assert code == 1, "a runbook that cannot be read is a failed check"
    assert f"✓ runbooks: 1 runbook from git {remote} (main) at {head(remote)[:10]}, last synced " in out
    assert "; 1 skipped" in out
    assert "✗ runbook broken.md: line 3: unknown key 'service': write 'services'" in out
