"""GitHub's REST shapes for a repository's history, as documented: deployments and their statuses, releases, commits
and tags; and a responder for the scripted server that answers by path, so requests made at once each get theirs.

Field names and nesting follow GitHub's REST reference (API version 2022-11-28) and its examples.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from testkit.fakes.model_server import RecordedRequest, Reply

API = "https://api.github.com"
WEB = "https://github.com"


def iso(moment: datetime) -> str:
    """GitHub's timestamps: ISO 8601 in UTC with a Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def user_json(login: str, user_id: int = 583231) -> dict[str, Any]:
    return {"login": login, "id": user_id, "node_id": "MDQ6VXNlcjU4MzIzMQ==", "type": "User", "site_admin": False,
            "avatar_url": f"https://avatars.githubusercontent.com/u/{user_id}?v=4", "url": f"{API}/users/{login}",
            "html_url": f"{WEB}/{login}"}  # fmt: skip


def deployment_json(
    repo: str, deployment_id: int, *, sha: str, ref: str, environment: str, created: datetime, creator: str,
    description: str = "", task: str = "deploy",
) -> dict[str, Any]:  # fmt: skip
    url = f"{API}/repos/{repo}/deployments/{deployment_id}"
    return {"url": url, "id": deployment_id, "node_id": "MDEwOkRlcGxveW1lbnQx", "sha": sha, "ref": ref, "task": task,
            "payload": {}, "original_environment": environment, "environment": environment,
            "description": description or None, "creator": user_json(creator), "created_at": iso(created),
            "updated_at": iso(created), "statuses_url": f"{url}/statuses", "repository_url": f"{API}/repos/{repo}",
            "transient_environment": False, "production_environment": environment == "production"}  # fmt: skip


def deployment_status_json(
    repo: str, deployment_id: int, status_id: int, *, state: str, created: datetime, log_url: str = ""
) -> dict[str, Any]:
    return {"url": f"{API}/repos/{repo}/deployments/{deployment_id}/statuses/{status_id}", "id": status_id,
            "node_id": "MDE2OkRlcGxveW1lbnRTdGF0dXMx", "state": state, "creator": user_json("deploy-bot", 1),
            "description": f"Deployment {state}.", "environment": "production", "target_url": log_url,
            "created_at": iso(created), "updated_at": iso(created),
            "deployment_url": f"{API}/repos/{repo}/deployments/{deployment_id}", "repository_url": f"{API}/repos/{repo}",
            "environment_url": "https://orders.example.com", "log_url": log_url}  # fmt: skip


def release_json(
    repo: str, release_id: int, *, tag: str, name: str, published: datetime | None, author: str,
    draft: bool = False, prerelease: bool = False,
) -> dict[str, Any]:  # fmt: skip
    url = f"{API}/repos/{repo}/releases/{release_id}"
    return {"url": url, "html_url": f"{WEB}/{repo}/releases/tag/{tag}", "assets_url": f"{url}/assets",
            "upload_url": f"https://uploads.github.com/repos/{repo}/releases/{release_id}/assets{{?name,label}}",
            "tarball_url": f"{API}/repos/{repo}/tarball/{tag}", "zipball_url": f"{API}/repos/{repo}/zipball/{tag}",
            "id": release_id, "node_id": "MDc6UmVsZWFzZTE=", "tag_name": tag, "target_commitish": "main",
            "name": name, "body": "What changed.", "draft": draft, "prerelease": prerelease,
            "created_at": iso(published or datetime(2026, 1, 1, tzinfo=UTC)),
            "published_at": iso(published) if published else None, "author": user_json(author), "assets": []}  # fmt: skip


def commit_json(repo: str, sha: str, *, message: str, committed: datetime, parents: int = 1) -> dict[str, Any]:
    person = {"name": "Dana Dev", "email": "dana@example.com", "date": iso(committed)}
    return {"url": f"{API}/repos/{repo}/commits/{sha}", "sha": sha, "node_id": "MDY6Q29tbWl0MQ==",
            "html_url": f"{WEB}/{repo}/commit/{sha}", "comments_url": f"{API}/repos/{repo}/commits/{sha}/comments",
            "commit": {"url": f"{API}/repos/{repo}/git/commits/{sha}", "author": person, "committer": person,
                       "message": message, "tree": {"url": f"{API}/repos/{repo}/git/trees/{'f' * 40}", "sha": "f" * 40},
                       "comment_count": 0, "verification": {"verified": False, "reason": "unsigned", "signature": None,
                                                            "payload": None, "verified_at": None}},
            "author": user_json("dana"), "committer": user_json("web-flow", 19864447),
            "parents": [{"url": f"{API}/repos/{repo}/commits/{n:040x}", "sha": f"{n:040x}"} for n in range(parents)]}  # fmt: skip


def tag_json(repo: str, name: str, sha: str) -> dict[str, Any]:
    return {"name": name, "commit": {"sha": sha, "url": f"{API}/repos/{repo}/commits/{sha}"},
            "zipball_url": f"{API}/repos/{repo}/zipball/{name}", "tarball_url": f"{API}/repos/{repo}/tarball/{name}",
            "node_id": "MDM6UmVmcmVmcy90YWdzL3YwLjE="}  # fmt: skip


NOT_FOUND = {"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}


class GitHubHistory:
    """`FakeModelServer.respond` for one repository: the reply for each path under /repos/{repo}, else a 404."""

    def __init__(self, repo: str, replies: Mapping[str, Reply | list[Any]]) -> None:
        self.prefix = f"/repos/{repo}"
        self.replies = {path: r if isinstance(r, Reply) else Reply(r) for path, r in replies.items()}

    def __call__(self, request: RecordedRequest) -> Reply:
        return self.replies.get(request.path.removeprefix(self.prefix), Reply(NOT_FOUND, status=404))
