"""Side-effect actions (rollback, restart) sent to the operator's signed webhook, journalled for exactly-once.

They run only behind the kernel's side-effect policy and a human approval; the journal makes a retry harmless.
"""

from opsagent_tools.actions.family import ActionsFamily
from opsagent_tools.actions.journal import ActionJournal, InMemoryActionJournal, SideEffectState
from opsagent_tools.actions.settings import ActionsSettings, ActionWebhookSettings
from opsagent_tools.actions.tools import action_tools
from opsagent_tools.actions.webhook import ActionWebhook

__all__ = [
    "ActionJournal",
    "ActionWebhook",
    "ActionWebhookSettings",
    "ActionsFamily",
    "ActionsSettings",
    "InMemoryActionJournal",
    "SideEffectState",
    "action_tools",
]
