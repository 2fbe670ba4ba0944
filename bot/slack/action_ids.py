"""The `action_id`s of the bot's buttons: what the Block Kit builders put on them and the listeners match.

Spelled once, so a renamed button cannot leave its listener waiting for clicks that never come.
"""

from __future__ import annotations

APPROVE = "opsagent_approve"
DENY = "opsagent_deny"
STOP = "opsagent_stop"
FEEDBACK = "opsagent_feedback"
"""The 👍/👎 feedback buttons on a run's summary."""
FEEDBACK_REASON = "opsagent_feedback_reason"
"""The `callback_id` of the modal that asks why a 👎."""
