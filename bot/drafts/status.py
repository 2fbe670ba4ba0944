"""A short stakeholder update on an investigation, in plain language, for a person to check and send: what is
affected, what is known, what is being done, when the next update comes.

One model call over the recorded facts writes it; without a model, or when it fails, the facts say it plainly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from bot.drafts.facts import IncidentFacts
from bot.drafts.narrative import Narrative, narrate
from bot.drafts.postmortem import FACTS_CHARS, facts_text, incident_title
from bot.store.records import RunStatus
from bot.verdict import tool_steps
from kernel import LLM

KEYS = ("affected", "known", "doing", "next_update")
ASK = (
    "Write a short status update about the incident below for stakeholders who are not engineers, one or two "
    "sentences per key: affected (what is affected, for whom), known (what is known so far: the cause only if the "
    "facts establish it, else the leading explanation said as unconfirmed), doing (what is being done now), "
    "next_update (when the next update comes, e.g. within 30 minutes)."
)
NEXT_UPDATE = "Within 30 minutes, or sooner if anything changes."


@dataclass(frozen=True)
class StatusUpdate:
    """The update's four parts (`KEYS`), the incident it is about, and how it was written."""

    title: str
    parts: dict[str, str]
    narrative: Narrative


async def draft_status(facts: IncidentFacts, llm: LLM | None) -> StatusUpdate:
    """The update: the model's words where it wrote them, the recorded facts otherwise."""
    narrative = await narrate(llm, ask=ASK, keys=KEYS, facts=facts_text(facts)[:FACTS_CHARS])
    plain = _from_facts(facts)
    written = {key: narrative.sections.get(key, plain[key]) for key in KEYS}
    return StatusUpdate(title=incident_title(facts), parts=written, narrative=narrative)


def _from_facts(facts: IncidentFacts) -> dict[str, str]:
    record, trace = facts.record, facts.trace
    services = sorted({v for alert in record.alert_labels for k, v in alert.items() if k in ("service", "app", "job")})
    affected = f"The {', '.join(services)} service{'s' if len(services) > 1 else ''}." if services else record.task
    findings = trace.findings if trace is not None else None
    hypothesis = trace.leading_hypothesis if trace is not None else None
    if findings is not None:
        level = trace.evidence_check.confidence if trace is not None and trace.evidence_check else findings.confidence
        sure = f" (confidence: {level.value})" if level is not None else ""
        known = f"{findings.summary} {findings.root_cause}".strip() + sure
    elif hypothesis is not None:
        known = f"Not confirmed yet; the working explanation: {hypothesis.text}"
    else:
        known = "The cause is not known yet."
    actions = trace.actions_taken() if trace is not None else ()
    done = "; ".join(f"{action.call.name} ({'done' if action.ok else 'failed'})" for action in actions)
    steps = tool_steps(trace.steps) if trace is not None else 0
    match record.status:
        case RunStatus.RUNNING:
            doing = f"OpsAgent is investigating ({steps} checks so far)."
        case RunStatus.AWAITING_APPROVAL:
            doing = "OpsAgent is waiting for a person to approve a proposed action."
        case RunStatus.FINISHED:
            doing = "The investigation has ended" + (f"; actions taken: {done}." if done else "; no action was taken.")
        case _:
            assert_never(record.status)
    if done and record.status is not RunStatus.FINISHED:
        doing += f" Actions taken: {done}."
    return {"affected": affected, "known": known, "doing": doing, "next_update": NEXT_UPDATE}
