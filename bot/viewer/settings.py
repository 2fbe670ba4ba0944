"""`[viewer]` settings: the trace viewer's public URL and how long its signed links work.

Plain data, so reading the configuration loads no web server.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_LINK_TTL_S = 7 * 24 * 3600
"""A week: long enough for the post-incident review, short enough that a leaked link dies."""


class ViewerSettings(BaseModel):
    """`[viewer]`: the trace viewer. Present means enabled; the signing secret comes from the environment only."""

    model_config = ConfigDict(extra="forbid")

    public_url: str
    """The base URL people reach the bot at (e.g. https://opsagent.example.com): links are built on it."""
    link_ttl_s: int = Field(default=DEFAULT_LINK_TTL_S, gt=0)
    """How long a trace link works after the run ends."""

    @field_validator("public_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", value):
            raise ValueError(f"public_url must be an http(s) URL without query or fragment, not {value!r}")
        return value.rstrip("/")
