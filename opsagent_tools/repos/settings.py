"""The `[tools.repos]` section: which repositories the tools may read (local clones or GitHub), their other names,
how much they show and which paths they refuse. Tokens are named by environment variable, never written here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from opsagent_tools.repos.git import DEFAULT_GIT_TIMEOUT
from opsagent_tools.repos.github_api import DEFAULT_API_URL, DEFAULT_HTTP_TIMEOUT, DEFAULT_TOKEN_ENV, FULL_NAME
from opsagent_tools.repos.shapes import DEFAULT_MAX_DIFF_BYTES, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_PATCH_BYTES_PER_FILE


class RepoConfig(BaseModel):
    """One repository: a local clone (`path`) or a GitHub repository (`github: owner/name`).

    A plain string is accepted too: 'github:acme/order-service', or a path to a clone.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path | None = None
    github: str | None = None
    api_url: str = DEFAULT_API_URL
    """For GitHub Enterprise: 'https://github.example.com/api/v3'."""
    token_env: str = DEFAULT_TOKEN_ENV
    """The environment variable holding the token (never the token itself)."""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"github": value.removeprefix("github:")} if value.startswith("github:") else {"path": value}
        if isinstance(value, Path):
            return {"path": value}
        return value

    @model_validator(mode="after")
    def _one_source(self) -> RepoConfig:
        if (self.path is None) == (self.github is None):
            raise ValueError("give exactly one of 'path' (a local clone) or 'github' ('owner/name')")
        if self.github is not None and (not FULL_NAME.match(self.github) or ".." in self.github):
            raise ValueError(f"'github' must look like 'owner/name', got {self.github!r}")
        return self


class RepoSettings(BaseModel):
    """Which repositories the tools may read, how much they show, and which paths they refuse."""

    model_config = ConfigDict(extra="forbid")

    repositories: dict[str, RepoConfig]
    """By the name the model uses, usually the service's: {'order-service': '/srv/clones/order-service'}."""
    default_repo: str | None = None
    """Used when the model names no repository; with a single repository it is the default anyway."""
    services: dict[str, str] = Field(default_factory=dict)
    """Other names for repositories, e.g. {'checkout': 'order-service'} when a service lives in another repo."""
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, ge=1024)
    max_diff_bytes: int = Field(default=DEFAULT_MAX_DIFF_BYTES, ge=1024)
    max_patch_bytes_per_file: int = Field(default=DEFAULT_MAX_PATCH_BYTES_PER_FILE, ge=256)
    extra_deny_patterns: list[str] = Field(default_factory=list)
    """Added to the default secret-file deny list (same syntax: 'name*', '*.ext', 'dir/', 'a/b.yaml')."""
    git_timeout_s: float = Field(default=DEFAULT_GIT_TIMEOUT, gt=0)
    http_timeout_s: float = Field(default=DEFAULT_HTTP_TIMEOUT, gt=0)
    tool_timeout_s: float = Field(default=30.0, gt=0)
    """A whole tool call, which may run several git commands or HTTP requests."""

    @model_validator(mode="after")
    def _names_exist(self) -> RepoSettings:
        if not self.repositories:
            raise ValueError("configure at least one repository")
        for label, name in [("default_repo", self.default_repo), *self.services.items()]:
            if name is not None and name not in self.repositories:
                raise ValueError(f"{label} names '{name}', which is not in repositories")
        return self
