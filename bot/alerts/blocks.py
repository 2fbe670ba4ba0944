"""Slack Block Kit messages of an alert's thread (the opening summary, alerts joining, resolved), by pure functions.

Labels and annotations come from Alertmanager, i.e. from whoever wrote the rules: all of it is escaped, so an
annotation cannot ping the channel or forge a link; only the alerts' own http(s) source links become links.
"""

from __future__ import annotations

from typing import Any

from bot.alerts.payload import Alert, AlertGroup
from bot.slack.blocks import HEADER_CHARS, Message, build_message, context_block, section_blocks
from bot.slack.mrkdwn import clip, clip_literal, inline_code, markdown_to_mrkdwn, slack_date

MAX_LISTED = 10
"""Alerts listed one per line in a message; the rest are counted."""
_ANNOTATION_CHARS = 1500
_LABELS_CHARS = 300
_SUMMARY_KEYS = ("summary", "description")


def alert_opened(group: AlertGroup, alerts: list[Alert]) -> Message:
    """The top-level message that opens an alert's investigation thread: what fires, since when, where from."""
    title = f"🚨 {group.name} is firing"
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": clip(title, HEADER_CHARS), "emoji": True}}
    ]
    facts = [f"*Alerts firing:* {len(alerts) + group.truncated_alerts}"]
    if severity := group.common_labels.get("severity"):
        facts.insert(0, f"*Severity:* {clip_literal(severity, 100)}")
    if alerts:
        facts.append(f"*Since:* {slack_date(min(alert.starts_at for alert in alerts))}")
    blocks += section_blocks(" · ".join(facts))
    annotations = group.common_annotations or (alerts[0].annotations if len(alerts) == 1 else {})
    described = [
        f"*{key.capitalize()}:* {clip_literal(' '.join(annotations[key].split()), _ANNOTATION_CHARS)}"
        for key in _SUMMARY_KEYS
        if annotations.get(key, "").strip()
    ]
    if described:
        blocks += section_blocks("\n".join(described))
    if group.common_labels:
        blocks += section_blocks(f"*Labels:* {_labels(group.common_labels)}")
    blocks += section_blocks("\n".join(_alert_lines(alerts, group)))
    where = [f"receiver {inline_code(group.receiver[:100])}"]
    if link := _link("Alertmanager", group.external_url):
        where.append(link)
    blocks.append(context_block(f"From Alertmanager ({' · '.join(where)}). OpsAgent investigates in this thread."))
    return build_message(title, blocks, "alert.opened")


def alerts_joined(group: AlertGroup, alerts: list[Alert]) -> Message:
    """A note in the thread: more alerts of the same group started firing (the run keeps going)."""
    count = len(alerts)
    head = f"➕ {count} more alert{'s' if count != 1 else ''} of {group.name} started firing:"
    blocks = section_blocks("\n".join([clip_literal(head, 300), *_alert_lines(alerts, group)]))
    return build_message(head, blocks, "alert.joined")


POSTMORTEM_OFFER = "Want a postmortem draft? Say “@opsagent postmortem” in this thread."


def alert_resolved(group: AlertGroup, *, offer_postmortem: bool = False) -> Message:
    """The closing note: the group resolved, and when; with `offer_postmortem` (it had an investigation), the
    one-line offer to draft its postmortem."""
    ended = [alert.ends_at for alert in group.alerts if alert.ends_at is not None and alert.ends_at.year > 1]
    when = f" at {slack_date(max(ended))}" if ended else ""
    text = f"✅ Resolved: Alertmanager reports {group.name} resolved"
    line = f"{clip_literal(text, 300)}{when}."
    blocks = section_blocks(line) + ([context_block(POSTMORTEM_OFFER)] if offer_postmortem else [])
    return build_message(text, blocks, "alert.resolved")


def _alert_lines(alerts: list[Alert], group: AlertGroup) -> list[str]:
    """One line per alert: the labels that tell it from the group's, its start, its source link."""
    lines = []
    for alert in alerts[:MAX_LISTED]:
        own = {key: value for key, value in alert.labels.items() if group.common_labels.get(key) != value}
        parts = [f"• {_labels(own) if own else inline_code(alert.name)}", f"since {slack_date(alert.starts_at)}"]
        summary = alert.annotations.get("summary", "").strip()
        if summary and summary != group.common_annotations.get("summary"):
            parts.append(clip_literal(" ".join(summary.split()), 300))
        if link := _link("source", alert.generator_url):
            parts.append(link)
        lines.append(" · ".join(parts))
    hidden = max(0, len(alerts) - MAX_LISTED) + group.truncated_alerts
    if hidden:
        lines.append(f"• … and {hidden} more")
    return lines


def _labels(labels: dict[str, str]) -> str:
    return inline_code(clip(", ".join(f"{key}={value}" for key, value in sorted(labels.items())), _LABELS_CHARS))


def _link(label: str, url: str) -> str | None:
    """An http(s) URL as a mrkdwn link, or None for anything else (no `javascript:` or forged `<!channel>`)."""
    if not url.lower().startswith(("http://", "https://")) or len(url) > 2000 or any(c.isspace() for c in url):
        return None
    return markdown_to_mrkdwn(f"[{label}]({url})")
