"""`[alertmanager]` settings and the receiver's shared secret, read from the environment only.

Plain data, so reading the configuration loads no receiver and no Slack machinery.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

TOKEN_ENV = "OPSAGENT_ALERTMANAGER_TOKEN"
MIN_TOKEN_CHARS = 16


class AlertmanagerSettings(BaseModel):
    """`[alertmanager]`: where alert investigations open. The shared secret comes from the environment only."""

    model_config = ConfigDict(extra="forbid")

    channel: str = Field(min_length=1)
    """The Slack channel id (C…) where each firing alert group opens a thread; the bot must be a member."""
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024 * 1024)
    """The largest notification `POST /alertmanager` takes (413 past it; other routes keep 1 MiB). A group of a
    thousand alerts is a few MiB; cap what Alertmanager sends with the receiver's `max_alerts` instead."""

    @model_validator(mode="before")
    @classmethod
    def _no_secret_in_file(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and any("token" in str(key).lower() for key in data):
            raise ValueError(f"the Alertmanager token is read from {TOKEN_ENV} only; remove it from the file")
        return data


def alertmanager_token(environ: Mapping[str, str] = os.environ) -> str:
    """The shared secret Alertmanager must send as `Authorization: Bearer …`; the receiver never runs without one."""
    token = environ.get(TOKEN_ENV, "").strip()
    if len(token) < MIN_TOKEN_CHARS:
        problem = "is not set" if not token else f"is shorter than {MIN_TOKEN_CHARS} characters"
        raise ValueError(
            f"[alertmanager] is configured but {TOKEN_ENV} {problem}: set it to a random secret "
            "(e.g. `openssl rand -hex 32`) and give Alertmanager the same value as its bearer token"
        )
    return token
