"""The local git backend and the repository tools, on real repositories built by `samples.git_repos`.

Reads at tags, advice for unknown refs and paths, symlinks, binary and big files, capped diffs, injection.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import pytest

from kernel import Tool, ToolFailure
from opsagent_tools.repos import RepoConfig, RepoSettings, repo_tools
from opsagent_tools.repos.git import GitRepo
from opsagent_tools.repos.sandbox import close_paths
from opsagent_tools.repos.shapes import PathIsDirectory
from samples.git_repos import (
    APP_YAML_V1,
    APP_YAML_V2,
    BIG_FILE_BYTES,
    commit,
    git,
    make_order_service,
    make_wide_change,
    write,
)


@pytest.fixture(scope="module")
def repo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repos")
    make_order_service(root)
    make_wide_change(root)
    return root


@pytest.fixture
def repo(repo_root: Path) -> GitRepo:
    return GitRepo("order-service", repo_root / "order-service")


def suggestions(message: str) -> list[str]:
    found = re.search(r"Did you mean:? ([^?]*)\?", message)
    return found.group(1).split(", ") if found else []


async def test_read_a_file_at_each_tag(repo: GitRepo) -> None:
    old = await repo.read_file("config/app.yaml", "v2.13.2")
    new = await repo.read_file("config/app.yaml", "v2.14.0")  # an annotated tag, peeled to its commit
    assert old.text == APP_YAML_V1
    assert new.text == APP_YAML_V2
    assert new.render().splitlines()[0].startswith("order-service:config/app.yaml at v2.14.0 (commit ")
    assert new.render().endswith("new_checkout: true\n")
    assert not new.truncated


async def test_an_unknown_ref_lists_the_tags_and_branches_that_exist(repo: GitRepo) -> None:
    with pytest.raises(ToolFailure) as caught:
        await repo.read_file("config/app.yaml", "v9.9")
    message = str(caught.value)
    assert message.startswith("No ref 'v9.9' in repo order-service.")
    assert "Recent tags: v2.14.0, v2.13.2." in message
    assert "Branches: main." in message

    with pytest.raises(ToolFailure, match=r"Did you mean v2\.14\.0"):
        await repo.read_file("config/app.yaml", "v2.14")


async def test_a_missing_path_suggests_close_matches_but_never_secret_files(repo: GitRepo) -> None:
    with pytest.raises(ToolFailure) as caught:
        await repo.read_file("config/app.yml", "v2.14.0")
    assert "No file or directory 'config/app.yml' at v2.14.0 in order-service." in str(caught.value)
    assert suggestions(str(caught.value))[0] == "config/app.yaml"

    with pytest.raises(ToolFailure) as caught:
        await repo.read_file("app.yaml", "v2.14.0")
    assert suggestions(str(caught.value)) == ["config/app.yaml"]

    with pytest.raises(ToolFailure) as caught:
        await repo.read_file(".env2", "HEAD")
    assert ".env" in close_paths(".env2", [".env", "README.md"])  # it would be offered, were it not a secret
    assert ".env" not in suggestions(str(caught.value))


async def test_a_file_added_later_is_not_found_at_the_older_tag(repo: GitRepo) -> None:
    assert "CREATE INDEX" in (await repo.read_file("migrations/0042_add_index.sql", "v2.14.0")).text
    with pytest.raises(ToolFailure, match=r"No file or directory 'migrations/0042_add_index\.sql' at v2\.13\.2"):
        await repo.read_file("migrations/0042_add_index.sql", "v2.13.2")


@pytest.mark.parametrize(("path", "target"), [("leak", "/etc/passwd"), ("config/sneaky", "../../../etc/hostname")])
async def test_symlinks_out_of_the_repository_are_refused(repo: GitRepo, path: str, target: str) -> None:
    with pytest.raises(ToolFailure) as caught:
        await repo.read_file(path, "HEAD")
    assert str(caught.value).startswith(f"'{path}' is a symlink to '{target}', outside the repository")
    assert "root:" not in str(caught.value)


async def test_a_symlink_inside_the_repository_is_followed_and_says_so(repo: GitRepo) -> None:
    content = await repo.read_file("config/current.yaml", "v2.13.2")
    assert content.text == APP_YAML_V1
    assert content.path == "config/app.yaml"
    assert "reached through the symlink config/current.yaml" in content.render()


async def test_a_symlink_to_a_secret_file_is_refused(repo: GitRepo) -> None:
    with pytest.raises(ToolFailure, match=r"Refused path '\.env'"):
        await repo.read_file("config/env-link", "HEAD")


@pytest.mark.parametrize("path", [".env", "id_rsa", "deploy/secrets/db.yaml", "./config/../.env"])
async def test_committed_secret_files_are_refused(repo: GitRepo, path: str) -> None:
    with pytest.raises(ToolFailure, match="not readable here"):
        await repo.read_file(path, "v2.14.0")


async def test_a_binary_file_is_summarised_not_dumped(repo: GitRepo) -> None:
    content = await repo.read_file("assets/logo.png", "HEAD")
    text = content.render()
    assert content.binary_kind == "PNG image"
    assert "binary file (PNG image), 1040 bytes; its content is not shown." in text
    assert "IHDR" not in text
    assert "\x00" not in text


async def test_a_big_file_is_cut_at_a_line_with_an_explicit_marker(repo_root: Path) -> None:
    small_cap = GitRepo("order-service", repo_root / "order-service", max_file_bytes=1000)
    content = await small_cap.read_file("data/events.log", "HEAD")
    assert content.size == BIG_FILE_BYTES
    assert content.shown_bytes == 992  # 62 whole lines of 16 bytes
    assert content.text.endswith("event 00061 ok.\n")
    assert content.render().endswith(f"\n…[truncated: showing the first 992 of {BIG_FILE_BYTES} bytes]")

    default_cap = await GitRepo("order-service", repo_root / "order-service").read_file("data/events.log")
    assert default_cap.truncated
    assert f"…[truncated: showing the first {default_cap.shown_bytes} of {BIG_FILE_BYTES} bytes]" in (
        default_cap.render()
    )
    assert default_cap.shown_bytes <= 64 * 1024


async def test_directories_are_listed_with_secret_names_marked_as_withheld(repo: GitRepo) -> None:
    listing = (await repo.list_dir("", "v2.14.0")).render()
    lines = listing.splitlines()
    assert lines[0].startswith("order-service:/ at v2.14.0 (commit ")
    assert "  config/" in lines
    assert "  .env  (withheld: matches the secret-file deny list)" in lines
    assert "  leak  (symlink)" in lines
    assert "hunter2" not in listing

    with pytest.raises(PathIsDirectory):
        await repo.read_file("config", "HEAD")
    with pytest.raises(ToolFailure, match="is a file, not a directory"):
        await repo.list_dir("config/app.yaml", "HEAD")
    with pytest.raises(ToolFailure, match="not readable here"):
        await repo.list_dir("deploy/secrets", "HEAD")
    through_link = await repo.list_dir("settings", "HEAD")
    assert through_link.path == "config"
    assert "app.yaml" in [entry.name for entry in through_link.entries]
    with pytest.raises(ToolFailure, match="outside the repository"):
        await repo.list_dir("leak", "HEAD")


async def test_diff_between_tags_lists_files_commits_and_patches(repo: GitRepo) -> None:
    text = (await repo.diff("v2.13.2", "v2.14.0")).render()
    lines = text.splitlines()
    assert lines[0] == "v2.13.2..v2.14.0 in order-service: 5 files changed, +8 -4"
    assert lines[1] == "Commits (2, newest first):"
    assert lines[2].endswith(" Tune the DB pool and add an index")
    assert lines[3].endswith(" Validate orders before saving")
    assert "  modified config/app.yaml  +5 -3" in lines
    assert "  added    migrations/0042_add_index.sql  +1 -0" in lines
    assert "  modified .env  +1 -1  (patch withheld: matches the secret-file deny list)" in lines
    assert "  renamed  src/orders/util.py -> src/orders/helpers.py  +0 -0" in lines
    assert "-  pool_size: 20" in lines
    assert "+  pool_size: 5" in lines
    assert "correcthorsebattery" not in text
    assert "hunter2" not in text
    assert text.index("diff --git a/config/app.yaml") < text.index("diff --git a/src/orders/handler.py")


async def test_diff_limited_to_a_path_and_backwards(repo: GitRepo) -> None:
    scoped = (await repo.diff("v2.13.2", "v2.14.0", path="config/")).render()
    assert scoped.splitlines()[0] == "v2.13.2..v2.14.0 in order-service (path config): 1 file changed, +5 -3"
    backwards = (await repo.diff("v2.14.0", "v2.13.2", path="config")).render()
    assert "Commits: none" in backwards
    assert "v2.13.2 does not descend from v2.14.0" in backwards
    assert "+  pool_size: 20" in backwards.splitlines()


async def test_a_wide_diff_is_cut_per_file_but_keeps_every_file_header(repo_root: Path) -> None:
    wide = GitRepo("wide", repo_root / "wide", max_diff_bytes=8000, max_patch_bytes_per_file=4000)
    diff = await wide.diff("v1", "v2")
    text = diff.render()
    assert text.splitlines()[0] == "v1..v2 in wide: 13 files changed, +4789 -4789"
    for change in diff.changes:
        assert f"diff --git a/{change.path} b/{change.path}" in text
    assert text.count("…[patch cut: showing") == 12
    assert "Long patches are cut: compare_refs with path='<file>' shows one file's diff in full" in text
    assert "+max_connections: 10" in text  # the small config change is shown whole, and first
    assert text.index("config/limits.yaml b/") < text.index("src/module_00.py b/")
    assert len(text.encode()) < 8000 + 4000  # the budget, plus the file list, headers and markers

    one_file = (await wide.diff("v1", "v2", path="src/module_03.py")).render()
    assert one_file.count("…[patch cut") == 1
    assert len(one_file) > len(text) / 2  # a single file may use the whole budget


async def test_option_injection_through_refs_and_paths_does_nothing(repo: GitRepo, tmp_path: Path) -> None:
    out = tmp_path / "pwned"
    for ref in (f"--output={out}", "-p", "--exec=touch /tmp/x"):
        with pytest.raises(ToolFailure, match="refs cannot start with '-'"):
            await repo.read_file("config/app.yaml", ref)
        with pytest.raises(ToolFailure, match="refs cannot start with '-'"):
            await repo.diff(ref, "v2.14.0")
    with pytest.raises(ToolFailure, match="No file or directory"):
        await repo.read_file(f"--output={out}".lstrip("/"), "HEAD")
    literal = await repo.diff("v2.13.2", "v2.14.0", path=f"--output={out}".replace("/", "_"))
    assert literal.changes == []
    assert not out.exists()


async def test_git_that_hangs_is_cut_off_at_the_timeout(repo_root: Path, tmp_path: Path) -> None:
    slow_git = tmp_path / "slow-git"
    slow_git.write_text("#!/bin/sh\nexec sleep 30\n")
    slow_git.chmod(0o755)
    repo = GitRepo("order-service", repo_root / "order-service", timeout=0.3, git=str(slow_git))
    with pytest.raises(ToolFailure, match=r"git timed out after 0\.3 s in order-service \(git rev-parse\)"):
        await repo.read_file("config/app.yaml", "v2.14.0")


async def test_a_cancelled_call_leaves_no_git_running(repo_root: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "git.pid"
    slow_git = tmp_path / "slow-git"
    slow_git.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 30\n")
    slow_git.chmod(0o755)
    repo = GitRepo("order-service", repo_root / "order-service", timeout=60, git=str(slow_git))
    task = asyncio.create_task(repo.read_file("config/app.yaml", "v2.14.0"))
    for _ in range(1000):  # until the fake git has started and written its pid
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    task.cancel()  # what the kernel does when a tool runs past its timeout
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


async def test_a_missing_clone_says_so(tmp_path: Path) -> None:
    with pytest.raises(ToolFailure, match="is not a directory"):
        await GitRepo("gone", tmp_path / "gone").read_file("README.md")


async def test_a_directory_inside_another_clone_is_not_read_as_that_clone(repo_root: Path) -> None:
    inside = repo_root / "order-service" / "src"  # a wrong path: git must not walk up to order-service
    with pytest.raises(ToolFailure, match="is not a git repository"):
        await GitRepo("src", inside).read_file("orders/handler.py")


# --- the tools --------------------------------------------------------------------------------------


async def call(tool: Tool, **args: Any) -> str:
    validated = tool.args_model.model_validate(args)
    return (await tool.handler(**validated.model_dump())).text


def tools_for(repo_root: Path, **settings: Any) -> dict[str, Tool]:
    repositories = {"order-service": str(repo_root / "order-service"), "wide": {"path": repo_root / "wide"}}
    config = RepoSettings(repositories=repositories, **settings)
    return {tool.name: tool for tool in repo_tools(config)}


async def test_the_tools_read_compare_and_list(repo_root: Path) -> None:
    tools = tools_for(repo_root, default_repo="order-service", services={"checkout": "order-service"})
    assert set(tools) == {"read_repo_file", "compare_refs"}
    compared = await call(tools["compare_refs"], base="v2.13.2", head="v2.14.0")
    assert compared.startswith("v2.13.2..v2.14.0 in order-service: 5 files changed, +8 -4\n")
    read = await call(tools["read_repo_file"], path="config/app.yaml", ref="v2.14.0", repo="Checkout")
    assert "pool_size: 5" in read
    listing = await call(tools["read_repo_file"], path="config", ref="v2.14.0")
    assert listing.startswith("order-service:config/ at v2.14.0")
    root = await call(tools["read_repo_file"], path="", repo="wide")
    assert "  src/" in root.splitlines()


async def test_the_tools_explain_how_to_name_a_repository(repo_root: Path) -> None:
    tools = tools_for(repo_root)
    with pytest.raises(ToolFailure, match="Several repositories are configured: order-service, wide") as several:
        await call(tools["read_repo_file"], path="README.md")
    assert several.value.hint == "Pass repo as one of these."
    with pytest.raises(ToolFailure, match=r"No repository 'billing' is configured\. Configured: order-service, wide\."):
        await call(tools["compare_refs"], base="v1", head="v2", repo="billing")


def test_the_tool_descriptions_tell_the_model_when_and_how() -> None:
    config = RepoSettings(repositories={"order-service": "/srv/order-service"})
    specs = {tool.name: tool.spec for tool in repo_tools(config)}
    compare = specs["compare_refs"]
    assert "deploy event" in compare.description
    assert "omit it for order-service" in compare.parameters["properties"]["repo"]["description"]
    assert "relative to the repository root" in specs["read_repo_file"].description
    assert compare.parameters["required"] == ["base", "head"]


def test_settings_refuse_what_cannot_work() -> None:
    with pytest.raises(ValueError, match="exactly one of 'path'"):
        RepoConfig(path=Path("/srv/x"), github="acme/x")
    with pytest.raises(ValueError, match="owner/name"):
        RepoConfig(github="acme/../x")
    with pytest.raises(ValueError, match="default_repo names 'nope'"):
        RepoSettings(repositories={"a": "/srv/a"}, default_repo="nope")
    with pytest.raises(ValueError, match="checkout names 'billing'"):
        RepoSettings(repositories={"a": "/srv/a"}, services={"checkout": "billing"})
    github = RepoConfig.model_validate("github:acme/order-service")
    assert (github.github, github.path, github.token_env) == ("acme/order-service", None, "GITHUB_TOKEN")
    assert RepoConfig.model_validate(os.fspath("/srv/order-service")).path == Path("/srv/order-service")


async def test_a_secret_file_renamed_away_is_withheld_in_the_diff(tmp_path: Path) -> None:
    repo_path = tmp_path / "leaky"
    repo_path.mkdir()
    git(repo_path, "init", "--quiet", "--initial-branch=main")
    write(repo_path, ".env", "DB_PASSWORD=hunter2hunter2\nAPI_TOKEN=abc123abc123\n")
    write(repo_path, "README.md", "hello\n")
    commit(repo_path, "first", "2026-11-01T10:00:00Z")
    git(repo_path, "tag", "v1")
    git(repo_path, "mv", ".env", "settings.txt")
    write(repo_path, "settings.txt", "DB_PASSWORD=hunter2hunter2\nAPI_TOKEN=abc123abc123\nEXTRA=1\n")
    commit(repo_path, "rename", "2026-11-02T10:00:00Z")
    git(repo_path, "tag", "v2")
    diff = await GitRepo("leaky", repo_path).diff("v1", "v2")
    shown = diff.render()
    assert "hunter2" not in shown
    assert "settings.txt" in shown
