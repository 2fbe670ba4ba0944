"""The `[knowledge]` section's runbook keys: a directory of Markdown runbooks, or a git repository kept in sync.

Without either there are no runbook tools and no runbooks are named at the start of a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from opsagent_tools.runbooks.documents import MAX_FILE_BYTES

DEFAULT_CACHE_DIR = Path("~/.cache/opsagent/runbooks")


class RunbookSettings(BaseModel):
    """Where the runbooks are. `runbooks_git` is cloned (shallow, one ref) into `cache_dir` and fetched again
    every `sync_interval_s`; a failed fetch keeps the last good copy, and `opsagent check` says so."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runbooks: Path | None = None
    """A directory of runbooks (`*.md`, searched recursively; re-read when a file changes)."""
    runbooks_git: str | None = None
    """A git URL or a local repository path to fetch runbooks from (credentials from git's own helpers)."""
    ref: str = Field(default="main", min_length=1)
    """The branch or tag of `runbooks_git` to follow."""
    sync_interval_s: float = Field(default=300.0, ge=0)
    """How old the runbooks may get before the next use re-reads the directory or fetches the repository."""
    cache_dir: Path = DEFAULT_CACHE_DIR
    """Where `runbooks_git` is checked out, one subdirectory per URL."""
    git_timeout_s: float = Field(default=60.0, gt=0)
    """Seconds one git command may take while syncing."""
    max_runbook_bytes: int = Field(default=MAX_FILE_BYTES, gt=0, le=MAX_FILE_BYTES)
    """Larger files are skipped (and reported by `opsagent check`); at most 256 KiB, the most a runbook is read."""

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if self.runbooks is not None and self.runbooks_git is not None:
            raise ValueError("knowledge: set runbooks (a directory) or runbooks_git (a repository), not both")
        if self.ref.startswith("-"):
            raise ValueError(f"knowledge.ref {self.ref!r} cannot start with '-': name a branch or tag")
        return self

    @property
    def configured(self) -> bool:
        """Whether any runbooks are configured."""
        return self.runbooks is not None or self.runbooks_git is not None
