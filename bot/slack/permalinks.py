"""Links to Slack itself: the permalink of an investigation's thread, for the memory of past incidents and the
drafts."""

from __future__ import annotations


def thread_url(workspace_url: str, channel: str, thread_ts: str) -> str:
    """The Slack permalink of a thread in the workspace at `workspace_url` (auth.test's `url`), or "" without one (or
    for a run posted in no channel)."""
    if not workspace_url.startswith("https://") or not channel:
        return ""
    return f"{workspace_url.rstrip('/')}/archives/{channel}/p{thread_ts.replace('.', '')}"
