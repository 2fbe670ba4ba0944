"""The `[tools.actions]` section: the operator's action webhook, where side-effect actions are sent and how they are
signed; left out, the agent has no side-effect tools at all. The signing secret is named, never written here."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ActionWebhookSettings(BaseModel):
    """Where side-effect actions go and how they are signed."""

    url: str
    """The operator's receiver (Argo CD / Jenkins / GitHub Actions bridge, runbook service)."""
    secret_env: str = "OPSAGENT_ACTION_SECRET"
    """Environment variable holding the HMAC key the receiver verifies; never in the config file."""
    timeout_s: float = Field(default=10.0, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra headers sent with every action (for example a gateway's routing header)."""


class ActionsSettings(BaseModel):
    """Side-effect actions; absent means the agent has no side-effect tools at all."""

    model_config = ConfigDict(extra="forbid")

    webhook: ActionWebhookSettings
