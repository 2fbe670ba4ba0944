"""What a person sees of a repository read: the file and its size at the ref, or the comparison naming the setting
it changed, and the GitHub page (or a configured web home) at that ref; over a real git clone and the fake GitHub."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from kernel import SourceLink, Tool
from opsagent_tools.links import LinkSettings
from opsagent_tools.repos import RepoSettings, repo_tools
from opsagent_tools.repos.headline import diff_headline, setting_changes
from opsagent_tools.repos.links import RepoLinks
from opsagent_tools.repos.shapes import Diff, FileChange
from samples.git_repos import make_order_service
from testkit.fakes.model_server import FakeModelServer, Reply
from tools.repos.test_github_repo import APP_YAML, COMPARE_FILES, TOKEN, compare_json, content_json
from worlds.dispatch import dispatch_call

PASSWORD = "enterprise-api-password-42"


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_order_service(tmp_path_factory.mktemp("headlines"))


def local_tools(clone: Path, links: LinkSettings | None = None) -> list[Tool]:
    return repo_tools(RepoSettings(repositories={"order-service": str(clone)}), links)


async def test_a_comparison_names_the_setting_it_changed_and_never_a_withheld_patch(clone: Path) -> None:
    result = await dispatch_call(local_tools(clone), "compare_refs", base="v2.13.2", head="v2.14.0")
    assert result.headline == (
        "v2.13.2…v2.14.0: 5 files · config/app.yaml pool_size 20 → 5 · timeout_ms 500 → 200 · retries 3 → 0"
    )
    assert result.links == (), "a local clone has no web pages unless [links] git_web_url names them"
    assert "hunter2" not in result.headline
    assert "correcthorse" not in result.headline


async def test_a_file_a_cut_file_a_binary_and_a_listing(clone: Path) -> None:
    tools = local_tools(clone)
    app = await dispatch_call(tools, "read_repo_file", path="config/app.yaml", ref="v2.14.0")
    assert app.headline == "config/app.yaml@v2.14.0 (8 lines)"
    big = await dispatch_call(tools, "read_repo_file", path="data/events.log", ref="v2.14.0")
    assert big.headline == "data/events.log@v2.14.0 (first 4,096 lines, 65,536 of 80,000 bytes)"
    logo = await dispatch_call(tools, "read_repo_file", path="assets/logo.png", ref="v2.14.0")
    assert logo.headline == "assets/logo.png@v2.14.0 (binary: PNG image, 1,040 bytes)"
    listing = await dispatch_call(tools, "read_repo_file", path="config", ref="v2.14.0")
    assert listing.headline == "config/@v2.14.0: 5 entries"
    root = await dispatch_call(tools, "read_repo_file", path="")
    assert root.headline == "order-service@HEAD: 11 entries"


async def test_a_configured_web_home_links_a_local_clone_at_the_ref(clone: Path) -> None:
    links = LinkSettings(git_web_url="https://gitlab.example.com/acme/{repo}/-")
    tools = local_tools(clone, links)
    compared = await dispatch_call(tools, "compare_refs", base="v2.13.2", head="v2.14.0")
    assert [(link.label, link.url) for link in compared.links] == [
        ("diff", "https://gitlab.example.com/acme/order-service/-/compare/v2.13.2...v2.14.0")
    ]
    app = await dispatch_call(tools, "read_repo_file", path="config/app.yaml", ref="v2.14.0")
    assert [link.url for link in app.links] == [
        "https://gitlab.example.com/acme/order-service/-/blob/v2.14.0/config/app.yaml"
    ]
    config = await dispatch_call(tools, "read_repo_file", path="config", ref="v2.14.0")
    assert [link.url for link in config.links] == [
        "https://gitlab.example.com/acme/order-service/-/tree/v2.14.0/config"
    ]


async def test_github_links_go_to_the_web_host_without_the_api_path_or_credentials(
    server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    host = urlsplit(server.url).netloc
    api_url = f"http://opsagent:{PASSWORD}@{host}/api/v3"
    settings = RepoSettings(repositories={"order-service": {"github": "acme/order-service", "api_url": api_url}})
    tools = repo_tools(settings)
    server.script(Reply(compare_json(COMPARE_FILES)), Reply(content_json("config/app.yaml", APP_YAML.encode())))
    compared = await dispatch_call(tools, "compare_refs", base="v2.13.2", head="v2.14.0")
    assert compared.headline == "v2.13.2…v2.14.0: 5 files · config/app.yaml pool_size 20 → 5"
    assert [link.url for link in compared.links] == [f"http://{host}/acme/order-service/compare/v2.13.2...v2.14.0"]
    read = await dispatch_call(tools, "read_repo_file", path="config/app.yaml", ref="v2.14.0")
    assert read.headline == "config/app.yaml@v2.14.0 (4 lines)"
    assert [link.url for link in read.links] == [f"http://{host}/acme/order-service/blob/v2.14.0/config/app.yaml"]
    assert all(PASSWORD not in link.url and "opsagent" not in link.url for link in (*compared.links, *read.links))


def test_the_public_github_api_links_to_github_com_with_every_ref_quoted() -> None:
    links = RepoLinks.of("orders", "acme/order-service", "https://api.github.com", LinkSettings())
    assert links.compare("v1", "release/v2 #3") == SourceLink(
        "diff", "https://github.com/acme/order-service/compare/v1...release/v2%20%233"
    )
    assert links.file("HEAD", "a b/c?.yaml") == SourceLink(
        "file", "https://github.com/acme/order-service/blob/HEAD/a%20b/c%3F.yaml"
    )
    assert RepoLinks.of("orders", None, "https://api.github.com", LinkSettings()).file("v1", "x") is None


def test_settings_are_read_from_yaml_toml_env_and_json_lines() -> None:
    patch = "\n".join([
        "@@ -1,9 +1,9 @@",
        " db:",
        "-  timeout: 2s",
        "+  timeout: 200ms",
        "-MAX_CONN=10",
        "\\ No newline at end of file",
        "+MAX_CONN=50",
        ' "retries": 3,',
        '-  "replicas": 3,',
        '+  "replicas": 1,',
        "-  same: 1",
        "+  same: 1  # a comment is not a change",
        "-  max_size: 50",
        "+  max_size: 10  # sized for pgbouncer",
        "-  url: 'http://a#b'",
        "+  url: 'http://a#c'",
        "-gone: yes",
        " context",
        "+added: yes",
    ])  # fmt: skip
    assert setting_changes(patch) == [
        ("timeout", "2s", "200ms"),
        ("MAX_CONN", "10", "50"),
        ("replicas", "3", "1"),
        ("max_size", "50", "10"),
        ("url", "'http://a#b'", "'http://a#c'"),
    ]


def test_settings_that_do_not_fit_are_counted() -> None:
    patch = "\n".join(["@@ -1,9 +1,9 @@", *(f"-  key_{i}: old-value-{i}\n+  key_{i}: new-value-{i}" for i in range(9))])
    changes = [FileChange("config/a-rather-long-name/app.yaml", "modified", 9, 9, patch=patch)]
    headline = diff_headline(Diff("svc", "v1", "v2", changes))
    assert headline == "v1…v2: 1 file · config/a-rather-long-name/app.yaml key_0 old-value-0 → new-value-0 (+8 more)"
    assert len(headline) <= 120
