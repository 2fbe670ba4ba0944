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
from bot.runs.memory import SERVICE_ARGUMENTS, SERVICE_LABELS
from bot.store.records import RunStatus
from bot.verdict import tool_steps
from bot.verdict_actions import ActionState, actions_of
from kernel import LLM
from opsagent_tools.metrics.headline import BARS

KEYS = ("affected", "known", "doing", "next_update")
ASK = (
    "Write a short status update about the incident below for stakeholders who are not engineers, one or two "
    "sentences per key: affected (what is affected, for whom), known (what is known so far: the cause only if the "
    "facts establish it, else the leading explanation said as unconfirmed), doing (what is being done now), "
    "next_update (when the next update comes, e.g. within 30 minutes)."
)
NEXT_UPDATE = "Within 30 minutes, or sooner if anything changes."
METRIC_TOOLS = frozenset({"query_metrics"})
"""The tools whose headline is a measured change ("http_5xx_rate 0.10% → 12.0% at t-10m ▁▁▇█"): the symptom."""
MAX_SYMPTOMS = 3


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


def _affected(facts: IncidentFacts) -> str:
    """What is affected, from what the run measured, never from the request's words: each service with the change
    its metric showed ("order-service: http_5xx_rate 0.10% → 12.0%"), else the services its alert or its calls
    named, else that it is not established yet."""
    trace = facts.trace
    steps = trace.steps if trace is not None else []
    symptoms: dict[str, str] = {}
    for step in steps:
        args = step.call.args if step.call is not None and step.call.name in METRIC_TOOLS else {}
        service, change = args.get("service"), step.headline.rstrip(BARS + " ").partition(" at t-")[0]
        if step.ok and isinstance(service, str) and service.strip() and "→" in change:
            symptoms.setdefault(service.strip(), change)
    if symptoms:
        return "; ".join(f"{service}: {change}" for service, change in list(symptoms.items())[:MAX_SYMPTOMS]) + "."
    labelled = [v for alert in facts.record.alert_labels for k, v in alert.items() if k in SERVICE_LABELS]
    read = [step.call for step in steps if step.call is not None and step.approval is None]  # not its actions
    called = [call.args.get(key) for call in read for key in SERVICE_ARGUMENTS]
    services = list(dict.fromkeys(s.strip() for s in (*labelled, *called) if isinstance(s, str) and s.strip()))
    if services:
        named = ", ".join(services[:MAX_SYMPTOMS])
        return f"{named} (the symptom is not measured yet)."
    return "Not established yet: no service has been checked."


def _from_facts(facts: IncidentFacts) -> dict[str, str]:
    record, trace = facts.record, facts.trace
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
    actions = actions_of(trace.steps, trace.stop_reason) if trace is not None else ()
    ran = (ActionState.DONE, ActionState.FAILED)
    done = "; ".join(f"{action.tool} ({action.state})" for action in actions if action.state in ran)
    left = [a for a in actions if a.state not in (*ran, ActionState.WAITING)]
    not_done = "; ".join(f"{a.tool} ({a.state.replace('_', ' ')})" for a in left)
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
    if not_done:
        doing += f" Proposed, not done: {not_done}."
    return {"affected": _affected(facts), "known": known, "doing": doing, "next_update": NEXT_UPDATE}
