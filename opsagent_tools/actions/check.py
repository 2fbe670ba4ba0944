"""`opsagent check` for actions: the signing secret is there (or not needed); the webhook itself is never called,
since any request to it could be taken for an action."""

from __future__ import annotations

from collections.abc import Mapping

from opsagent_tools.actions.settings import ActionsSettings
from opsagent_tools.actions.webhook import ActionWebhook
from opsagent_tools.check_result import CheckResult


def check_actions(settings: ActionsSettings, environ: Mapping[str, str], *, previews_only: bool) -> CheckResult:
    """The webhook's line: previews only when the policy sends nothing and no secret is set, else whether the
    signing secret the settings name is present."""
    webhook = settings.webhook
    if previews_only and not environ.get(webhook.secret_env):
        return CheckResult(
            "actions", True, f"webhook {webhook.url}: previews only (the policy sends nothing), no secret needed"
        )
    try:
        ActionWebhook.from_env(webhook, environ)
    except ValueError as exc:
        return CheckResult("actions", False, str(exc))
    return CheckResult("actions", True, f"webhook {webhook.url}, signing secret present (not called by check)")
