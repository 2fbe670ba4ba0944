"""Slack Block Kit messages of an alert's thread (the opening summary, alerts joining, resolved), by pure functions
of the facts the alerts room hands over (`AlertGroupFacts`), as the run thread's are of the verdict.

Labels and annotations come from Alertmanager, i.e. from whoever wrote the rules: all of it is escaped, so an
annotation cannot ping the channel or forge a link; only the alerts' own http(s) source links become links.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.slack.blocks import HEADER_CHARS, Message, build_message, context_block, section_blocks
from bot.slack.mrkdwn import clip, clip_literal, inline_code, markdown_to_mrkdwn, slack_date

MAX_LISTED = 10
"""Alerts listed one per line in a message; the rest are counted."""
_ANNOTATION_CHARS = 1500
_LABELS_CHARS = 300


@dataclass(frozen=True, slots=True)
class AlertFacts:
    """One alert, as its line in the thread tells it from the rest of its group."""

    name: str
    own_labels: Mapping[str, str]
    """Its labels that are not the group's common ones; with none, the line names the alert instead."""
    starts_at: datetime
    summary: str
    """Its own summary annotation when the group has not the same one in common; "" otherwise."""
    source_url: str
    """Alertmanager's generator URL of the alert, as sent: it becomes a link only if it is a plain http(s) URL."""


@dataclass(frozen=True, slots=True)
class AlertGroupFacts:
    """What an alert group's messages say of it. Every text is Alertmanager's (untrusted): the builders escape it."""

    name: str
    alerts: tuple[AlertFacts, ...]
    """The alerts the message is about: the firing ones when the thread opens, the new ones when they join."""
    left_out: int
    """Alerts Alertmanager left out of the payload (its `max_alerts`): counted, never listed."""
    common_labels: Mapping[str, str]
    summary: str
    """The group's summary annotation (its common one, or its only alert's); "" for none."""
    description: str
    """The group's description annotation, likewise."""
    receiver: str
    alertmanager_url: str


def alert_opened(group: AlertGroupFacts) -> Message:
    """The top-level message that opens an alert's investigation thread: what fires, since when, where from."""
    title = f"🚨 {group.name} is firing"
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": clip(title, HEADER_CHARS), "emoji": True}}
    ]
    facts = [f"*Alerts firing:* {len(group.alerts) + group.left_out}"]
    if severity := group.common_labels.get("severity"):
        facts.insert(0, f"*Severity:* {clip_literal(severity, 100)}")
    if group.alerts:
        facts.append(f"*Since:* {slack_date(min(alert.starts_at for alert in group.alerts))}")
    blocks += section_blocks(" · ".join(facts))
    described = [
        f"*{key}:* {clip_literal(' '.join(text.split()), _ANNOTATION_CHARS)}"
        for key, text in (("Summary", group.summary), ("Description", group.description))
        if text.strip()
    ]
    if described:
        blocks += section_blocks("\n".join(described))
    if group.common_labels:
        blocks += section_blocks(f"*Labels:* {_labels(group.common_labels)}")
    blocks += section_blocks("\n".join(_alert_lines(group)))
    where = [f"receiver {inline_code(group.receiver[:100])}"]
    if link := _link("Alertmanager", group.alertmanager_url):
        where.append(link)
    blocks.append(context_block(f"From Alertmanager ({' · '.join(where)}). OpsAgent investigates in this thread."))
    return build_message(title, blocks, "alert.opened")


def alerts_joined(group: AlertGroupFacts) -> Message:
    """A note in the thread: more alerts of the same group (`group.alerts`) started firing (the run keeps going)."""
    count = len(group.alerts)
    head = f"➕ {count} more alert{'s' if count != 1 else ''} of {group.name} started firing:"
    blocks = section_blocks("\n".join([clip_literal(head, 300), *_alert_lines(group)]))
    return build_message(head, blocks, "alert.joined")


POSTMORTEM_OFFER = "Want a postmortem draft? Say “@opsagent postmortem” in this thread."


def alert_resolved(name: str, ended_at: datetime | None, *, offer_postmortem: bool = False) -> Message:
    """The closing note: the group `name` resolved, and when (if Alertmanager said); with `offer_postmortem` (it
    had an investigation), the one-line offer to draft its postmortem."""
    when = f" at {slack_date(ended_at)}" if ended_at is not None else ""
    text = f"✅ Resolved: Alertmanager reports {name} resolved"
    line = f"{clip_literal(text, 300)}{when}."
    blocks = section_blocks(line) + ([context_block(POSTMORTEM_OFFER)] if offer_postmortem else [])
    return build_message(text, blocks, "alert.resolved")


def _alert_lines(group: AlertGroupFacts) -> list[str]:
    """One line per alert: the labels that tell it from the group's, its start, its summary, its source link."""
    lines = []
    for alert in group.alerts[:MAX_LISTED]:
        parts = [
            f"• {_labels(alert.own_labels) if alert.own_labels else inline_code(alert.name)}",
            f"since {slack_date(alert.starts_at)}",
        ]
        if alert.summary:
            parts.append(clip_literal(" ".join(alert.summary.split()), 300))
        if link := _link("source", alert.source_url):
            parts.append(link)
        lines.append(" · ".join(parts))
    hidden = max(0, len(group.alerts) - MAX_LISTED) + group.left_out
    if hidden:
        lines.append(f"• … and {hidden} more")
    return lines


def _labels(labels: Mapping[str, str]) -> str:
    return inline_code(clip(", ".join(f"{key}={value}" for key, value in sorted(labels.items())), _LABELS_CHARS))


def _link(label: str, url: str) -> str | None:
    """An http(s) URL as a mrkdwn link, or None for anything else (no `javascript:` or forged `<!channel>`)."""
    if not url.lower().startswith(("http://", "https://")) or len(url) > 2000 or any(c.isspace() for c in url):
        return None
    return markdown_to_mrkdwn(f"[{label}]({url})")
