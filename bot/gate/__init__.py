"""The one way in: every interaction (a mention, a click, a modal, an alert) as a typed request, and the gate that
admits or refuses it before any service reads it.

- `requests.py` the closed union of what people and services ask for, each carrying who asks.
- `gate.py`     the admission: who the asker is (workspace, guest, bot, deactivated, approver), where (channels),
                how often and how much (the limits), one refusal type, every refusal logged and audited.

Doors parse their payloads into requests where they arrive (`bot.listeners.door` for Slack, `bot.alerts` for
Alertmanager); services take only `Admitted` requests.
"""
