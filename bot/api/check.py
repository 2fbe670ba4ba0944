"""What `opsagent check` says of the API: off, or on with its clients and where their runs post; a failure (no
tokens, a malformed pair) says what to set, as `serve` would refuse to start."""

from __future__ import annotations

import os
from collections.abc import Mapping

from bot.api.settings import ApiSettings
from bot.api.tokens import ApiTokens
from opsagent_tools.check_result import CheckResult


def api_check(settings: ApiSettings, environ: Mapping[str, str] = os.environ) -> CheckResult | None:
    """The API's line: None when `[api]` is off; a failure when `serve` would refuse to start it."""
    if not settings.enabled:
        return None
    try:
        tokens = ApiTokens.from_env(settings, environ)
    except ValueError as exc:
        return CheckResult("api", False, str(exc))
    where = (
        f"posted in {settings.channel} unless a request names a channel"
        if settings.channel
        else ("posted where each request says, else in no channel")
    )
    approvals = (
        f"approvals of runs in no channel go to {settings.approval_channel}"
        if settings.approval_channel
        else "side effects of runs in no channel are denied ([api] approval_channel is not set)"
    )
    clients = ", ".join(tokens.names)
    message = f"/v1 and /mcp for {len(tokens.names)} clients ({clients}); runs {where}; {approvals}"
    return CheckResult("api", True, message)
