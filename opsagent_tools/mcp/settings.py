"""The `[tools.mcp.servers.<name>]` sections: how to reach each MCP server and how far to trust its tools.

Secrets never live in the file: `env` and `headers_env` name environment variables, read at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SERVER_NAME = re.compile(r"^[a-zA-Z0-9]+(?:[-_][a-zA-Z0-9]+)*$")
"""Letters and digits joined by single '-' or '_' (so '__' in a tool's full name always separates server from tool)."""
MAX_SERVER_NAME = 24
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_START_TIMEOUT_S = 20.0


class MissingSecret(ValueError):
    """A variable that `env` or `headers_env` names is not set: the server cannot be started."""


class McpServerSettings(BaseModel):
    """One MCP server: a command run over stdio, or a streamable-HTTP URL, and what its tools may do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    """The executable of a stdio server, e.g. "npx" or "/usr/local/bin/grafana-mcp"."""
    args: list[str] = Field(default_factory=list)
    env: list[str] = Field(default_factory=list)
    """NAMES of environment variables passed to a stdio server (besides PATH, HOME and the like), for its secrets."""
    cwd: str | None = None
    url: str | None = None
    """A streamable-HTTP endpoint, e.g. "https://mcp.example.com/mcp"."""
    headers_env: dict[str, str] = Field(default_factory=dict)
    """HTTP header name -> the environment variable holding its whole value, e.g. {Authorization = "GRAFANA_MCP_AUTH"}."""
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    """How long one tool call may take (the run's deadline may cut it shorter)."""
    start_timeout_s: float = Field(default=DEFAULT_START_TIMEOUT_S, gt=0)
    """How long starting the server, its handshake and its tool listing may take."""
    read_only: list[str] = Field(default_factory=list)
    """The server's tools (by the server's own names) that only read. Every other tool is a side effect: it runs
    only if the policy allows it and a human approves the call. A server's readOnlyHint is never trusted."""
    exclude: list[str] = Field(default_factory=list)
    """The server's tools (by the server's own names) never offered: ones the agent should not have, one of two
    whose names collide once made wire-safe (`a.b`, `a_b`), or one `opsagent check` says is left out, to
    acknowledge it."""

    @model_validator(mode="before")
    @classmethod
    def _no_cap(cls, data: object) -> object:
        if isinstance(data, Mapping) and "max_tools" in data:
            raise ValueError(
                "max_tools is gone: however many tools a server has, a run's request lists them on one line of "
                "load_tools' index until the model loads one; remove max_tools"
            )
        return data

    @field_validator("env")
    @classmethod
    def _env_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not ENV_NAME.fullmatch(name):
                raise ValueError(f"env lists names of environment variables, not values: {name!r} is not a name")
        return names

    @field_validator("headers_env")
    @classmethod
    def _header_env_names(cls, headers: dict[str, str]) -> dict[str, str]:
        for header, name in headers.items():
            if not ENV_NAME.fullmatch(name):
                raise ValueError(
                    f"headers_env.{header} names the environment variable holding the header's value; "
                    f"{name!r} is not a variable name"
                )
        return headers

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' (a stdio server) or 'url' (a streamable-HTTP server)")
        if self.url is not None and not re.match(r"https?://", self.url):
            raise ValueError(f"url must be an http:// or https:// endpoint, got {self.url!r}")
        if self.command is not None and self.headers_env:
            raise ValueError("headers_env is for a 'url' server; a stdio server gets its secrets through 'env'")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("args, env and cwd are for a 'command' server; a 'url' server takes headers_env")
        return self

    @property
    def transport(self) -> str:
        """How the server is reached, for people: "stdio: <command>" or the URL."""
        return f"stdio: {self.command}" if self.command is not None else f"{self.url}"

    def secrets(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The environment variables (stdio) or headers (HTTP) to send, read from `environ`; a missing one is a
        `MissingSecret` that names it."""
        wanted = {name: name for name in self.env} if self.command is not None else dict(self.headers_env)
        missing = sorted({name for name in wanted.values() if not environ.get(name)})
        if missing:
            raise MissingSecret(
                f"{', '.join(missing)} not set in the environment: set it, or remove it from the config"
            )
        return {key: environ[name] for key, name in wanted.items()}


class McpSettings(BaseModel):
    """`[tools.mcp]`: the MCP servers whose tools the agent may call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: dict[str, McpServerSettings] = Field(default_factory=dict)

    @field_validator("servers")
    @classmethod
    def _server_names(cls, servers: dict[str, McpServerSettings]) -> dict[str, McpServerSettings]:
        for name in servers:
            if len(name) > MAX_SERVER_NAME or not SERVER_NAME.fullmatch(name):
                raise ValueError(
                    f"MCP server name {name!r}: use up to 24 letters and digits joined by single '-' or '_' "
                    "(it prefixes the tool names the model sees, as <server>__<tool>)"
                )
        return servers
