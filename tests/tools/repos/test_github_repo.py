"""The GitHub backend over real HTTP: a local aiohttp server answers in GitHub's contents and compare shapes.

Every test asserts what the client sent (path, ref, headers) as well as what the model would see.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

import pytest

from kernel import ToolFailure
from opsagent_tools.repos import RepoSettings, repo_tools
from opsagent_tools.repos.github import GitHubRepo
from testkit.fakes.model_server import FakeModelServer, Reply, closed_port_url

TOKEN = "ghp_testtoken0123456789abcdefABCDEF0123"
REPO = "/repos/acme/order-service"
APP_YAML = "server:\n  port: 8080\ndb:\n  pool_size: 5\n"


@pytest.fixture
def github(server: FakeModelServer, monkeypatch: pytest.MonkeyPatch) -> GitHubRepo:
    monkeypatch.setenv("OPSAGENT_GH_TOKEN", TOKEN)
    return GitHubRepo("order-service", "acme/order-service", api_url=server.url, token_env="OPSAGENT_GH_TOKEN")


def content_json(path: str, data: bytes, *, kind: str = "file", **extra: Any) -> dict[str, Any]:
    """A contents API file object; GitHub wraps its base64 at 60 characters."""
    encoded = base64.b64encode(data).decode()
    wrapped = "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60)) + "\n"
    url = f"https://api.github.com{REPO}/contents/{path}?ref=v2.14.0"
    return {
        "type": kind,
        "encoding": "base64",
        "size": len(data),
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "content": wrapped,
        "sha": "3d21ec53a331a6f037a91c368710b99387d012c1",
        "url": url,
        "git_url": f"https://api.github.com{REPO}/git/blobs/3d21ec53a331a6f037a91c368710b99387d012c1",
        "html_url": f"https://github.com/acme/order-service/blob/v2.14.0/{path}",
        "download_url": f"https://raw.githubusercontent.com/acme/order-service/v2.14.0/{path}",
        "_links": {"self": url},
    } | extra


def dir_item(path: str, kind: str = "file", size: int = 0) -> dict[str, Any]:
    return {"type": kind, "size": size, "name": path.rsplit("/", 1)[-1], "path": path, "sha": "0" * 40}


NOT_FOUND = Reply(
    {"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}, status=404
)


async def test_read_file_decodes_base64_and_sends_ref_token_and_version(
    server: FakeModelServer, github: GitHubRepo
) -> None:
    server.script(Reply(content_json("config/app.yaml", APP_YAML.encode())))
    content = await github.read_file("./config//app.yaml", "v2.14.0")
    assert content.text == APP_YAML
    assert content.render().splitlines()[0] == f"order-service:config/app.yaml at v2.14.0, {len(APP_YAML)} bytes"
    [request] = server.requests
    assert (request.method, request.path, request.query) == (
        "GET",
        f"{REPO}/contents/config/app.yaml",
        {"ref": "v2.14.0"},
    )
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["accept"] == "application/vnd.github+json"
    assert request.headers["x-github-api-version"] == "2022-11-28"


async def test_head_reads_the_default_branch_and_no_token_sends_no_authorization(
    server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    server.script(Reply(content_json("README.md", b"# order-service\n")))
    enterprise = GitHubRepo("order-service", "acme/order-service", api_url=f"{server.url}/api/v3/")
    assert (await enterprise.read_file("README.md")).text == "# order-service\n"
    [request] = server.requests
    assert (request.path, request.query) == (f"/api/v3{REPO}/contents/README.md", {})
    assert "authorization" not in request.headers


@pytest.mark.parametrize(
    "path", ["../etc/passwd", "/etc/passwd", ".env", "config%2F..%2F.env", "deploy/secrets/db.yaml"]
)
async def test_the_sandbox_refuses_before_any_request(server: FakeModelServer, github: GitHubRepo, path: str) -> None:
    with pytest.raises(ToolFailure, match="Refused"):
        await github.read_file(path, "v2.14.0")
    with pytest.raises(ToolFailure, match="refs cannot start with '-'"):
        await github.diff("--output=/tmp/x", "v2.14.0")
    assert server.requests == []


async def test_a_missing_path_at_a_real_ref_suggests_files_from_its_directory(
    server: FakeModelServer, github: GitHubRepo
) -> None:
    server.script(
        NOT_FOUND,
        Reply("6dcb09b5b57875f334f61aebed695e2e4193db5e"),
        Reply([dir_item("config/app.yaml", size=40), dir_item("config/.env", size=9), dir_item("config/db", "dir")]),
    )
    with pytest.raises(ToolFailure) as caught:
        await github.read_file("config/app.yml", "v2.14.0")
    assert str(caught.value).startswith(
        "No file or directory 'config/app.yml' at v2.14.0 in order-service. Did you mean: config/app.yaml?"
    )
    assert [r.path for r in server.requests] == [
        f"{REPO}/contents/config/app.yml",
        f"{REPO}/commits/v2.14.0",
        f"{REPO}/contents/config",
    ]
    assert server.requests[1].headers["accept"] == "application/vnd.github.sha"
    assert server.requests[2].query == {"ref": "v2.14.0"}


async def test_an_unknown_ref_lists_the_tags(server: FakeModelServer, github: GitHubRepo) -> None:
    server.script(
        NOT_FOUND,
        Reply({"message": "No commit found for SHA: v2.14", "documentation_url": "https://docs.github.com"}, 422),
        Reply([{"name": "v2.14.0", "commit": {"sha": "a" * 40}}, {"name": "v2.13.2", "commit": {"sha": "b" * 40}}]),
    )
    with pytest.raises(ToolFailure) as caught:
        await github.read_file("config/app.yaml", "v2.14")
    assert str(caught.value).startswith(
        "No ref 'v2.14' in repo order-service (acme/order-service on GitHub). Did you mean v2.14.0"
    )
    assert "Tags: v2.14.0, v2.13.2." in str(caught.value)
    assert server.requests[2].path == f"{REPO}/tags"


async def test_rate_limit_says_when_it_resets(server: FakeModelServer, github: GitHubRepo) -> None:
    reset = 1_893_456_000  # 2030-01-01T00:00:00Z
    headers = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}
    server.script(Reply({"message": "API rate limit exceeded for user ID 1."}, status=403, headers=headers))
    with pytest.raises(ToolFailure) as caught:
        await github.read_file("config/app.yaml", "v2.14.0")
    message = str(caught.value)
    assert message.startswith("GitHub API rate limit reached (403: API rate limit exceeded for user ID 1.)")
    assert f"it resets at {datetime.fromtimestamp(reset, UTC):%H:%M:%S} UTC" in message
    assert caught.value.hint == "Do not retry before then: use other evidence meanwhile.", "the model's words apart"
    assert "retry" not in message
    assert TOKEN not in message


async def test_secondary_rate_limit_and_bad_token(server: FakeModelServer, github: GitHubRepo) -> None:
    server.script(
        Reply({"message": "You have exceeded a secondary rate limit."}, status=429, headers={"retry-after": "60"}),
        Reply({"message": "Bad credentials", "status": "401"}, status=401),
        Reply({"message": "Resource not accessible by integration"}, status=403),
    )
    with pytest.raises(ToolFailure, match="retry after 60 s"):
        await github.read_file("config/app.yaml", "v2.14.0")
    with pytest.raises(ToolFailure, match=r"rejected the token in \$OPSAGENT_GH_TOKEN \(401: Bad credentials\)"):
        await github.read_file("config/app.yaml", "v2.14.0")
    with pytest.raises(ToolFailure, match="may lack read access"):
        await github.list_dir("config", "v2.14.0")


async def test_a_slow_or_absent_github_is_reported_not_waited_for(server: FakeModelServer) -> None:
    slow = GitHubRepo("order-service", "acme/order-service", api_url=server.url, timeout=0.2)
    server.script(Reply(content_json("config/app.yaml", b"x"), delay=30))
    with pytest.raises(ToolFailure, match=r"GitHub did not answer within 0\.2 s"):
        await slow.read_file("config/app.yaml", "v2.14.0")
    absent = GitHubRepo("order-service", "acme/order-service", api_url=closed_port_url(), timeout=2)
    with pytest.raises(ToolFailure, match="Could not reach the GitHub API"):
        await absent.read_file("config/app.yaml", "v2.14.0")


async def test_symlinks_outside_and_symlinks_to_secrets_are_refused(
    server: FakeModelServer, github: GitHubRepo
) -> None:
    outside = content_json("leak", b"", kind="symlink", target="/etc/passwd")
    resolved_to_secret = content_json(".env", b"DATABASE_PASSWORD=hunter2hunter2\n")
    server.script(Reply(outside), Reply(resolved_to_secret))
    with pytest.raises(ToolFailure, match=r"'leak' is a symlink to '/etc/passwd'.*not followed"):
        await github.read_file("leak", "v2.14.0")
    with pytest.raises(ToolFailure, match=r"Refused path '\.env'") as caught:
        await github.read_file("config/env-link", "v2.14.0")
    assert "hunter2" not in str(caught.value)


async def test_a_symlink_inside_is_reported(server: FakeModelServer, github: GitHubRepo) -> None:
    server.script(Reply(content_json("config/app.yaml", APP_YAML.encode())))
    content = await github.read_file("config/current.yaml", "v2.14.0")
    assert (content.path, content.symlink_from, content.text) == ("config/app.yaml", "config/current.yaml", APP_YAML)


async def test_binary_files_are_summarised_and_big_files_fetched_raw_and_capped(
    server: FakeModelServer, github: GitHubRepo
) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(100)
    big = b"".join(b"line %06d\n" % i for i in range(200_000))  # 2.2 MB: GitHub sends no content
    server.script(
        Reply(content_json("assets/logo.png", png)),
        Reply(content_json("data/big.log", b"", size=len(big), encoding="none")),
        Reply(big, headers={"content-type": "application/vnd.github.raw+json"}),
    )
    logo = (await github.read_file("assets/logo.png", "v2.14.0")).render()
    assert (
        logo
        == "order-service:assets/logo.png at v2.14.0: binary file (PNG image), 116 bytes; its content is not shown."
    )
    log = await github.read_file("data/big.log", "v2.14.0")
    assert log.size == len(big)
    assert log.shown_bytes == 65_536 - 65_536 % 12  # whole 12-byte lines within 64 KiB
    assert log.render().endswith(f"\n…[truncated: showing the first {log.shown_bytes} of {len(big)} bytes]")
    raw_request = server.requests[2]
    assert raw_request.headers["accept"] == "application/vnd.github.raw+json"
    assert (raw_request.path, raw_request.query) == (f"{REPO}/contents/data/big.log", {"ref": "v2.14.0"})


async def test_list_dir_marks_secret_names(server: FakeModelServer, github: GitHubRepo) -> None:
    server.script(Reply([dir_item("config", "dir"), dir_item(".env", size=30), dir_item("README.md", size=16)]))
    listing = (await github.list_dir("", "v2.14.0")).render()
    assert listing.splitlines() == [
        "order-service:/ at v2.14.0: 3 entries (directories first)",
        "  config/",
        "  .env  (withheld: matches the secret-file deny list)",
        "  README.md  16 bytes",
    ]
    assert server.requests[0].path == f"{REPO}/contents"


def compare_json(files: list[dict[str, Any]], *, status: str = "ahead", behind_by: int = 0) -> dict[str, Any]:
    commits = [
        {"sha": "1b74c6f" + "0" * 33, "commit": {"message": "Validate orders before saving\n\nLong body."}},
        {"sha": "c3c5ce3" + "0" * 33, "commit": {"message": "Tune the DB pool and add an index"}},
    ]
    return {
        "url": f"https://api.github.com{REPO}/compare/v2.13.2...v2.14.0",
        "status": status,
        "ahead_by": len(commits) if status == "ahead" else 0,
        "behind_by": behind_by,
        "total_commits": len(commits) if status == "ahead" else 0,
        "commits": commits if status == "ahead" else [],
        "files": files,
    }


def file_entry(filename: str, status: str, additions: int, deletions: int, patch: str | None, **extra: Any):
    entry = {
        "sha": "bbcd538c8e72b8c175046e27cc8f907076331401",
        "filename": filename,
        "status": status,
        "additions": additions,
        "deletions": deletions,
        "changes": additions + deletions,
        "blob_url": f"https://github.com/acme/order-service/blob/v2.14.0/{filename}",
        "raw_url": f"https://github.com/acme/order-service/raw/v2.14.0/{filename}",
        "contents_url": f"https://api.github.com{REPO}/contents/{filename}?ref=v2.14.0",
    } | extra
    if patch is not None:
        entry["patch"] = patch
    return entry


COMPARE_FILES = [
    file_entry(".env", "modified", 1, 1, "@@ -1 +1 @@\n-DATABASE_PASSWORD=hunter2\n+DATABASE_PASSWORD=correcthorse"),
    file_entry("assets/logo.png", "modified", 0, 0, None),
    file_entry("config/app.yaml", "modified", 1, 1, "@@ -1,4 +1,4 @@\n db:\n-  pool_size: 20\n+  pool_size: 5"),
    file_entry(
        "migrations/0042_add_index.sql", "added", 1, 0, "@@ -0,0 +1 @@\n+CREATE INDEX orders_id ON orders (id);"
    ),
    file_entry("src/orders/api.py", "renamed", 0, 0, None, previous_filename="src/orders/handler.py"),
]


async def test_compare_lists_files_commits_and_patches(server: FakeModelServer, github: GitHubRepo) -> None:
    server.script(Reply(compare_json(COMPARE_FILES)))
    text = (await github.diff("v2.13.2", "v2.14.0")).render()
    lines = text.splitlines()
    assert lines[0] == "v2.13.2..v2.14.0 in order-service: 5 files changed, +3 -2"
    assert lines[1:4] == [
        "Commits (2, newest first):",
        "  c3c5ce3 Tune the DB pool and add an index",
        "  1b74c6f Validate orders before saving",
    ]
    assert "  modified .env  +1 -1  (patch withheld: matches the secret-file deny list)" in lines
    assert "  renamed  src/orders/handler.py -> src/orders/api.py  +0 -0" in lines
    assert "diff --git a/config/app.yaml b/config/app.yaml" in lines
    assert "+  pool_size: 5" in lines
    assert "No patch available for: assets/logo.png." in lines
    assert "hunter2" not in text
    assert "correcthorse" not in text
    [request] = server.requests
    assert request.path == f"{REPO}/compare/v2.13.2...v2.14.0"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"


async def test_compare_scoped_to_a_path_and_behind(server: FakeModelServer, github: GitHubRepo) -> None:
    server.script(Reply(compare_json(COMPARE_FILES)), Reply(compare_json([], status="behind", behind_by=2)))
    scoped = (await github.diff("v2.13.2", "v2.14.0", path="src/orders/handler.py")).render()
    assert (
        scoped.splitlines()[0]
        == "v2.13.2..v2.14.0 in order-service (path src/orders/handler.py): 1 file changed, +0 -0"
    )
    behind = (await github.diff("v2.14.0", "v2.13.2")).render()
    assert "Commits: none" in behind
    assert "No file differs between these refs." in behind
    assert server.requests[1].path == f"{REPO}/compare/v2.14.0...v2.13.2"


async def test_compare_with_an_unknown_base_names_it(server: FakeModelServer, github: GitHubRepo) -> None:
    server.script(NOT_FOUND, Reply({"message": "No commit found for SHA: v2.13.9"}, status=422), Reply([]))
    with pytest.raises(ToolFailure, match=r"No ref 'v2\.13\.9' in repo order-service .*No tags were listed"):
        await github.diff("v2.13.9", "v2.14.0")
    assert [r.path for r in server.requests] == [
        f"{REPO}/compare/v2.13.9...v2.14.0",
        f"{REPO}/commits/v2.13.9",
        f"{REPO}/tags",
    ]


async def test_the_tools_work_over_a_github_repository(
    server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    settings = RepoSettings(repositories={"order-service": {"github": "acme/order-service", "api_url": server.url}})
    tools = {tool.name: tool for tool in repo_tools(settings)}
    server.script(Reply(compare_json(COMPARE_FILES)), Reply(content_json("config/app.yaml", APP_YAML.encode())))
    compared = (await tools["compare_refs"].handler(base="v2.13.2", head="v2.14.0", repo=None, path=None)).text
    assert compared.startswith("v2.13.2..v2.14.0 in order-service: 5 files changed, +3 -2\n")
    read = (await tools["read_repo_file"].handler(path="config/app.yaml", ref="v2.14.0", repo="order-service")).text
    assert read.endswith(APP_YAML)
    assert server.requests[1].headers["authorization"] == f"Bearer {TOKEN}"
