"""`opsagent check` for repositories: each one's root listed at HEAD, which proves the clone or the token works."""

from __future__ import annotations

from opsagent_tools.repos.tools import RepoBackend


async def check_repo(backend: RepoBackend) -> str:
    """Whether the repository can be read, as one line; a ToolFailure when it cannot."""
    listing = await backend.list_dir("", "HEAD")
    return f"readable at HEAD ({len(listing.entries)} entries at the root)"
