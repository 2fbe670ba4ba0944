"""The actions family: the side-effect tools over the operator's signed webhook, and its `opsagent check` (the
secret is there, or not needed; the webhook itself is never called by a check)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kernel import Tool
from opsagent_tools.actions.check import check_actions
from opsagent_tools.actions.journal import ActionJournal
from opsagent_tools.actions.settings import ActionsSettings
from opsagent_tools.actions.tools import action_tools
from opsagent_tools.actions.webhook import ActionWebhook
from opsagent_tools.check_result import CheckResult
from opsagent_tools.family import ToolFamily


class ActionsFamily(ToolFamily):
    """`[tools.actions]`: the signing secret comes from `environ`; `journal` makes each action exactly-once;
    `previews_only`: the policy never sends an action, so no secret is needed."""

    keywords = ("rollback", "restart", "mitigate", "revert", "fix", "action")

    def __init__(
        self,
        settings: ActionsSettings,
        *,
        environ: Mapping[str, str],
        journal: ActionJournal | None = None,
        previews_only: bool = False,
    ) -> None:
        self.settings, self.environ, self.journal, self.previews_only = settings, environ, journal, previews_only

    def tools(self) -> Sequence[Tool]:
        webhook = ActionWebhook.from_env(
            self.settings.webhook, self.environ, journal=self.journal, previews_only=self.previews_only
        )
        return action_tools(webhook)

    async def check(self) -> list[CheckResult]:
        return [check_actions(self.settings, self.environ, previews_only=self.previews_only)]
