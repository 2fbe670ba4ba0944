"""👍/👎 on a run's verdict: the `feedback_buttons` element, what its clicks carry, and the modal asking why a 👎.

Slack sends an interaction on every change of the buttons and none for taking one back, so each click is read as
that person's latest rating of the run (last write wins), never counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bot.slack.action_ids import FEEDBACK, FEEDBACK_REASON
from bot.slack.blocks import check_button_value
from bot.slack.mrkdwn import clip

Thumb = Literal["up", "down"]
REASON_BLOCK, REASON_INPUT = "reason", "reason_text"
REASON_CHARS = 2000
"""The most a reason may hold (the modal's input says so to Slack, which enforces it)."""


@dataclass(frozen=True, slots=True)
class FeedbackClick:
    """What a click on the feedback buttons (or the reason modal's submission) says: whose run, which thumb."""

    run_id: str
    thumb: Thumb


def feedback_block(run_id: str) -> dict[str, Any]:
    """The `context_actions` block with Slack's feedback buttons; each button's value names the run and the thumb."""
    up, down = f"up:{run_id}", f"down:{run_id}"
    check_button_value(down, "run_id")
    return {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK,
                "positive_button": {
                    "text": {"type": "plain_text", "text": "👍"},
                    "value": up,
                    "accessibility_label": "This verdict helped",
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "👎"},
                    "value": down,
                    "accessibility_label": "This verdict was wrong or did not help",
                },
            }
        ],
    }


def feedback_click(value: str) -> FeedbackClick | None:
    """Read a feedback button's value back; None for one the bot did not make."""
    thumb, _, run_id = value.partition(":")
    if thumb == "up" and run_id:
        return FeedbackClick(run_id, "up")
    if thumb == "down" and run_id:
        return FeedbackClick(run_id, "down")
    return None


def reason_modal(run_id: str) -> dict[str, Any]:
    """The modal that asks why a verdict was wrong (optional); `private_metadata` carries only the run id."""
    return {
        "type": "modal",
        "callback_id": FEEDBACK_REASON,
        "private_metadata": clip(run_id, 3000),
        "title": {"type": "plain_text", "text": "What was wrong?"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Skip"},
        "blocks": [
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": "Thanks for the 👎. What was wrong, or what was the real cause? "
                    "Your words help turn this run into a test case.",
                },
            },
            {
                "type": "input",
                "block_id": REASON_BLOCK,
                "optional": True,
                "label": {"type": "plain_text", "text": "Reason"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": REASON_INPUT,
                    "multiline": True,
                    "max_length": REASON_CHARS,
                },
            },
        ],
    }


def submitted_reason(view: dict[str, Any]) -> tuple[str, str]:
    """The run id and the reason typed in a submitted `reason_modal` (the reason "" when left empty)."""
    values = view.get("state", {}).get("values", {})
    typed = values.get(REASON_BLOCK, {}).get(REASON_INPUT, {}).get("value") or ""
    return str(view.get("private_metadata") or ""), str(typed)[:REASON_CHARS]
