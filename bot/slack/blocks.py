"""The parts every Slack message of the bot is built from: the message, its limits, sections, context lines,
buttons, links to steps and sources, and block ids; the builders of each kind of message use only these.

Pure functions: every message keeps Slack's limits whatever the sizes, and every untrusted text is escaped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.slack.mrkdwn import clip, clip_mrkdwn, escape_mrkdwn, inline_code, link, size, split_mrkdwn
from kernel import SourceLink

MAX_BLOCKS = 50
SECTION_CHARS = 3000
HEADER_CHARS = 150
CONTEXT_TEXT_CHARS = 2000
FALLBACK_CHARS = 4000
BUTTON_VALUE_CHARS = 2000
MAX_SOURCE_LINKS = 3
"""Source links shown per step or claim; the viewer and the trace have every one."""
MAX_URL_CHARS = 1500
"""A longer link, as written in mrkdwn (a huge query in a URL), is left out of Slack; the viewer shows it."""
_SAFE_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_LABEL_CHARS = 30

StepUrl = Callable[[int], str | None]
"""The trace viewer's link to one step of the run (its `#step-N` anchor), or None when no viewer is configured."""


@dataclass(frozen=True, slots=True)
class Message:
    """One Slack message: `text` is the notification fallback, `blocks` what readers see."""

    text: str
    blocks: list[dict[str, Any]]

    def as_kwargs(self) -> dict[str, Any]:
        """The arguments for `chat_postMessage` / `chat_update`."""
        return {"text": self.text, "blocks": self.blocks}


def no_step_urls(index: int) -> str | None:
    """`StepUrl` when no trace viewer is configured: steps are named, not linked."""
    return None


def step_ref(index: int, step_url: StepUrl, label: str = "") -> str:
    """ "step 3" (or `label`), linked to that step in the trace viewer when there is one."""
    text = label or f"step {index}"
    url = step_url(index)
    return link(url, text) if url else text


def steps_ref(indexes: Sequence[int], step_url: StepUrl) -> str:
    """ "steps 1, 2", each number linked to its step in the viewer when there is one; "" for none."""
    if not indexes:
        return ""
    numbers = ", ".join(step_ref(index, step_url, str(index)) for index in indexes[:6])
    return f"step{'' if len(indexes) == 1 else 's'} {numbers}{', …' if len(indexes) > 6 else ''}"


def source_links(links: Sequence[SourceLink]) -> str:
    """A step's or a claim's source links, `<url|graph> · <url|logs>` (labels escaped, URLs made safe); only web
    links, and none so long it would crowd out the message."""
    shown = (link(s.url, clip(" ".join(s.label.split()) or "source", _LABEL_CHARS)) for s in links if _web(s.url))
    return " · ".join([text for text in shown if size(text) <= MAX_URL_CHARS][:MAX_SOURCE_LINKS])


def _web(url: str) -> bool:
    return url.lower().startswith(("https://", "http://"))


def ephemeral(text: str) -> Message:
    """A short reply only the clicker sees ("already decided by …"). `text` is trusted mrkdwn: build any
    untrusted part with `literal` (or `escape_mrkdwn`) and `user_ref`."""
    return build_message(text, section_blocks(text)[:3] or section_blocks("(empty)"), "ephemeral", escape=False)


def short_code(text: str, units: int = 100) -> str:
    """`text` as inline code of at most `units` size (cut with "…")."""
    return clip_mrkdwn(inline_code(text[:units]), units)


def section_blocks(text: str) -> list[dict[str, Any]]:
    """`text` (mrkdwn) as sections of at most Slack's 3,000 characters, code fences kept balanced."""
    return [{"type": "section", "text": {"type": "mrkdwn", "text": c}} for c in split_mrkdwn(text, SECTION_CHARS)]


def context_block(text: str) -> dict[str, Any]:
    """One small grey line of mrkdwn (cut to what a context element holds)."""
    chunks = split_mrkdwn(text, CONTEXT_TEXT_CHARS) or ["…"]
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": chunks[0]}]}


def button(text: str, action_id: str, value: str, style: str, confirm: dict[str, Any] | None = None) -> dict[str, Any]:
    """A button whose `value` (checked to fit) is all a click carries back."""
    check_button_value(value, action_id)
    button = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "value": value,
        "style": style,
    }
    return button | ({"confirm": confirm} if confirm else {})


def confirm_dialog(title: str, text: str, yes: str, no: str) -> dict[str, Any]:
    """The "are you sure?" dialog of a button that changes something (plain text, cut to Slack's limits)."""
    return {
        "title": {"type": "plain_text", "text": clip(title, 100)},
        "text": {"type": "plain_text", "text": clip(text, 300)},
        "confirm": {"type": "plain_text", "text": clip(yes, 30)},
        "deny": {"type": "plain_text", "text": clip(no, 30)},
        "style": "danger",
    }


def check_button_value(value: str, what: str) -> None:
    """Refuse a value that cannot travel in a button (empty, or more than Slack's 2,000 characters)."""
    if not value or size(value) > BUTTON_VALUE_CHARS:
        raise ValueError(f"{what} must be 1 to {BUTTON_VALUE_CHARS} characters to fit a button value")


def id_part(text: str) -> str:
    """`text` if it is a short, plain id; else a stable hash of it (block_ids must stay short and plain)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return text if _SAFE_ID.fullmatch(text) else f"h{digest}"


def content_id(prefix: str, blocks: Sequence[dict[str, Any]]) -> str:
    """`prefix` and a short digest of the blocks: a message updated to new content gets new block ids, as Slack
    asks, while the same content keeps its ids."""
    digest = hashlib.sha256(repr(blocks).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{prefix}.{digest}"


def build_message(fallback: str, blocks: list[dict[str, Any]], prefix: str, *, escape: bool = True) -> Message:
    """Blocks with unique block_ids under `prefix` (kept where set), within MAX_BLOCKS; an escaped fallback."""
    if len(blocks) > MAX_BLOCKS:
        blocks = [*blocks[: MAX_BLOCKS - 1], context_block("✂️ _Cut: too much for one Slack message; see the trace._")]
    for number, block in enumerate(blocks):
        block.setdefault("block_id", f"{prefix}.{number}")
    text = " ".join(fallback.split())
    text = escape_mrkdwn(clip(text, 700)) if escape else clip_mrkdwn(text, FALLBACK_CHARS)
    return Message(text=text or "OpsAgent", blocks=blocks)
