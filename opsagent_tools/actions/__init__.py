"""Side-effect actions (rollback, restart) sent to the operator's signed webhook, journalled for exactly-once.

They run only behind the kernel's side-effect policy and a human approval; the journal makes a retry harmless.
"""

from opsagent_tools.actions.journal import ActionJournal, InMemoryActionJournal, SideEffectState
from opsagent_tools.actions.webhook import ActionWebhook, ActionWebhookSettings, action_tools

__all__ = [
    "ActionJournal",
    "ActionWebhook",
    "ActionWebhookSettings",
    "InMemoryActionJournal",
    "SideEffectState",
    "action_tools",
]
