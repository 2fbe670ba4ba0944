"""The Alertmanager webhook payload (version 4) as pydantic models, the task and data an alert group asks for,
and the facts its thread's messages say (built into Block Kit by `bot.slack.alert_blocks`).

Parsing is strict where the bot relies on a field (group key, status, fingerprints) and lenient about fields
Alertmanager may add later, so a newer Alertmanager keeps working and a malformed body gets a precise 400.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from bot.slack.alert_blocks import AlertFacts, AlertGroupFacts
from kernel import Redactor

MAX_TASK_ALERTS = 10
"""Alerts described one by one in the task; the rest of a big group is counted."""
ANNOTATION_CHARS = 500
"""Each annotation is cut to this in the task (runbooks can be long; the thread links the source)."""


class AlertStatus(StrEnum):
    """What Alertmanager says of a group or of one alert."""

    FIRING = "firing"
    RESOLVED = "resolved"


class InvalidAlertPayload(ValueError):
    """The body is not an Alertmanager webhook payload; the message names the first problems."""


class Alert(BaseModel):
    """One alert of a group, as the webhook sends it."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    status: AlertStatus
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    starts_at: datetime = Field(alias="startsAt")
    ends_at: datetime | None = Field(default=None, alias="endsAt")
    """`0001-01-01T00:00:00Z` while firing."""
    generator_url: str = Field(default="", alias="generatorURL")
    fingerprint: str = Field(min_length=1)

    @property
    def name(self) -> str:
        """The `alertname` label (every Prometheus alert has one)."""
        return self.labels.get("alertname", "(no alertname)")


class AlertGroup(BaseModel):
    """One webhook notification: a group of alerts that share the route's `group_by` labels."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    version: Literal["4"]
    group_key: str = Field(alias="groupKey", min_length=1)
    truncated_alerts: int = Field(default=0, alias="truncatedAlerts", ge=0)
    """Alerts left out because of the receiver's `max_alerts`."""
    status: AlertStatus
    receiver: str
    group_labels: dict[str, str] = Field(alias="groupLabels")
    common_labels: dict[str, str] = Field(alias="commonLabels")
    common_annotations: dict[str, str] = Field(alias="commonAnnotations")
    external_url: str = Field(alias="externalURL")
    alerts: list[Alert] = Field(min_length=1)

    @classmethod
    def parse(cls, body: bytes) -> AlertGroup:
        """Validate a webhook body; anything else raises `InvalidAlertPayload` naming what is wrong and where."""
        try:
            return cls.model_validate_json(body)
        except ValidationError as exc:
            problems = exc.errors()
            listed = "; ".join(f"{'.'.join(map(str, p['loc'])) or '(body)'}: {p['msg']}" for p in problems[:5]) + (
                f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
            )
            raise InvalidAlertPayload(f"not an Alertmanager webhook payload (version 4): {listed}") from exc

    @property
    def name(self) -> str:
        """The group's alert name: the common one, else the first alert's."""
        return self.common_labels.get("alertname") or self.alerts[0].name

    @property
    def firing(self) -> list[Alert]:
        """The alerts of the group that are firing now."""
        return [alert for alert in self.alerts if alert.status is AlertStatus.FIRING]

    @property
    def ended_at(self) -> datetime | None:
        """When its last alert ended, as Alertmanager says; None while firing (its `endsAt` is year 1) or unsaid."""
        ended = [alert.ends_at for alert in self.alerts if alert.ends_at is not None and alert.ends_at.year > 1]
        return max(ended) if ended else None

    def redacted(self, redactor: Redactor) -> AlertGroup:
        """The same group with secrets masked in every text it carries (labels, annotations, the generator and
        external URLs, the group key, the receiver): all of it reaches Slack, the model, the trace or the store."""
        return AlertGroup.model_validate(_redact_texts(self.model_dump(by_alias=True, mode="json"), redactor))


def _redact_texts(value: JsonValue, redactor: Redactor) -> JsonValue:
    """Every string in a JSON value redacted (mapping keys, the label names, are kept)."""
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, dict):
        return {key: _redact_texts(item, redactor) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_texts(item, redactor) for item in value]
    return value


ALERT_TASK = "Alertmanager reports the alert group below firing. Investigate it and find the root cause."
"""The task of an alert-started run: our own words. Everything the payload says is its data (`alert_data`)."""


def alert_data(group: AlertGroup, alerts: list[Alert]) -> str:
    """What `alerts` of `group` say, for the model as data: each alert's labels, annotations, start and source, so
    the first step can already query the right service and window. Annotations interpolate values from traffic,
    so none of it may instruct the model: it goes in the data fence, never in the task."""
    severity = group.common_labels.get("severity")
    lines = [f"Alert group {group.name}" + (f" (severity {severity})" if severity else "") + "."]
    for number, alert in enumerate(alerts[:MAX_TASK_ALERTS], start=1):
        labels = ", ".join(f"{key}={value}" for key, value in sorted(alert.labels.items()))
        lines.append(f"Alert {number}: {alert.name} {{{labels}}}, firing since {alert.starts_at.isoformat()}.")
        for key in ("summary", "description"):
            if text := alert.annotations.get(key, "").strip():
                lines.append(f"  {key}: {' '.join(text.split())[:ANNOTATION_CHARS]}")
        if alert.generator_url:
            lines.append(f"  source: {alert.generator_url[:ANNOTATION_CHARS]}")
    hidden = max(0, len(alerts) - MAX_TASK_ALERTS) + group.truncated_alerts
    if hidden > 0:
        lines.append(f"And {hidden} more alerts in the group.")
    return "\n".join(lines)


def thread_facts(group: AlertGroup, alerts: list[Alert]) -> AlertGroupFacts:
    """What the thread's message about `alerts` of `group` says: each alert told apart from the group by its own
    labels and summary, and the group's annotations (its common ones, or its only alert's)."""
    annotations = group.common_annotations or (alerts[0].annotations if len(alerts) == 1 else {})
    return AlertGroupFacts(
        name=group.name,
        alerts=tuple(_alert_facts(alert, group) for alert in alerts),
        left_out=group.truncated_alerts,
        common_labels=group.common_labels,
        summary=annotations.get("summary", ""),
        description=annotations.get("description", ""),
        receiver=group.receiver,
        alertmanager_url=group.external_url,
    )


def _alert_facts(alert: Alert, group: AlertGroup) -> AlertFacts:
    summary = alert.annotations.get("summary", "").strip()
    return AlertFacts(
        name=alert.name,
        own_labels={key: value for key, value in alert.labels.items() if group.common_labels.get(key) != value},
        starts_at=alert.starts_at,
        summary=summary if summary != group.common_annotations.get("summary") else "",
        source_url=alert.generator_url,
    )
