"""`[api]` settings: the HTTP API and the MCP server other agents and tools call, and where their runs post.

Plain data, so reading the configuration loads no server. The tokens come from the environment only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

TOKENS_ENV = "OPSAGENT_API_TOKENS"
MAX_TASK_CHARS = 8000
"""The longest task the API takes (422 past it). A mention may be 40,000 characters; a task is a question, and
OpsAgent reads the logs, metrics and code itself: the cap keeps a pasted dump from filling the model's context."""
BODY_BYTES = 64 * 1024
"""The largest request body the API and the MCP server read (413 past it)."""
_CHANNEL = r"[CG][A-Z0-9]{2,30}"


class ApiSettings(BaseModel):
    """`[api]`: `POST /v1/investigations` and the rest, and the MCP server at `/mcp`, on `serve`'s HTTP listener."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    """Off by default: on, `serve` refuses to start without tokens in `tokens_env`."""
    tokens_env: str = Field(default=TOKENS_ENV, pattern=r"^[A-Z_][A-Z0-9_]{0,99}$")
    """The environment variable holding the clients' tokens: `name:token` pairs, comma-separated
    (`claude:3f9…,ci:a71…`). The name is the requester of its runs, in the thread and the audit log."""
    channel: str = Field(default="", pattern=f"^({_CHANNEL})?$")
    """The channel (C…) an API run is posted in when its request names none; "" : such runs post nowhere."""
    approval_channel: str = Field(default="", pattern=f"^({_CHANNEL})?$")
    """Where the approvals of runs posted in no channel go, each with its context; "": their side effects are
    denied (the verdict says so). A run posted in a channel asks for its approvals in its own thread."""

    @model_validator(mode="before")
    @classmethod
    def _no_secret_in_file(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and any("token" in str(key).lower() and key != "tokens_env" for key in data):
            raise ValueError(f"API tokens are read from the environment ({TOKENS_ENV}) only; remove them from the file")
        return data
