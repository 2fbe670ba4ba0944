"""A postmortem draft in Markdown: the recorded facts (impact window, timeline, actions, approvals, side effects,
the checked verdict) written by code, and the narrative sections by one model call over those facts, marked as
drafts. Without a model, or when it fails, the facts-only draft says so and leaves the narrative to people.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.drafts.facts import IncidentFacts, TimelineEntry
from bot.drafts.markdown import escaped, escaped_prose
from bot.drafts.narrative import Narrative, narrate
from bot.verdict_actions import actions_of, by_hand
from bot.words import stop_title
from kernel import LLM, StopReason

KEYS = ("summary", "impact", "root_cause", "trigger", "detection", "resolution", "follow_ups")
ASK = (
    "Draft these sections of the postmortem of the incident below: summary (two or three sentences: what happened, "
    "its effect, how it ended), impact (who and what was affected, and for how long), root_cause (the underlying "
    "cause as the investigation's checked verdict states it, with its confidence), trigger (what set it off: a "
    "deploy, a change, load), detection (how it was noticed), resolution (what ended it: only what the facts record "
    "as done), follow_ups (a list of concrete actions that would prevent it or catch it sooner)."
)
FOR_PEOPLE = "_For people to write._"
FACTS_CHARS = 24_000
"""The facts a model is given at most (the timeline of a long incident is cut, oldest kept)."""


@dataclass(frozen=True)
class Postmortem:
    """A draft: its Markdown and the narrative it holds (none, and why, when the model did not write one)."""

    markdown: str
    narrative: Narrative


async def draft_postmortem(facts: IncidentFacts, llm: LLM | None, *, thread_url: str = "", now: datetime) -> Postmortem:
    """The postmortem draft of the run the facts are about: the model (when there is one) writes the narrative."""
    narrative = await narrate(llm, ask=ASK, keys=KEYS, facts=facts_text(facts)[:FACTS_CHARS])
    return Postmortem(render_postmortem(facts, narrative, thread_url=thread_url, now=now), narrative)


def render_postmortem(facts: IncidentFacts, narrative: Narrative, *, thread_url: str = "", now: datetime) -> str:
    """The draft's Markdown: each section's recorded facts, then the model's narrative marked as a draft; every
    outside text escaped (the facts as text, the narrative as prose: no HTML, no image, links only to where they
    say)."""
    trace = facts.trace
    drafted = narrative.sections
    model = escaped(narrative.model)

    def section(title: str, key: str | None, facts_lines: Sequence[str]) -> list[str]:
        lines = [f"## {title}", ""]
        if key is not None and key in drafted:
            lines += [f"_✎ Drafted by {model}: check it._", "", escaped_prose(drafted[key]), ""]
        lines += [*facts_lines, ""] if facts_lines else []
        if len(lines) == 2:
            lines += [FOR_PEOPLE, ""]
        return lines

    lines = [f"# Postmortem draft: {escaped(incident_title(facts))}", "", *_banner(facts, narrative, model, now), ""]
    lines += section("Summary", "summary", _verdict_summary(facts))
    lines += section("Impact window", "impact", _impact_window(facts))
    source = (
        f"the trace file {escaped(facts.trace_file)}" if facts.trace_file else "the audit log and the thread's messages"
    )
    lines += ["## Timeline", "", f"All times UTC; from {source}.", ""]
    lines += [*timeline_rows(facts.timeline), ""]
    lines += section("Root cause", "root_cause", _root_cause(facts))
    lines += section("Trigger", "trigger", [])
    lines += section("Detection", "detection", _detection(facts))
    lines += section("Resolution", "resolution", _resolution(facts))
    lines += section("What went well", None, [])
    lines += section("What went badly", None, [])
    next_steps = [escaped(step) for step in (trace.findings.next_steps if trace and trace.findings else ())]
    next_steps += (
        [action.by_hand(code=escaped) for action in by_hand(actions_of(trace.steps, trace.stop_reason))]
        if trace
        else []
    )
    proposed = ["Next steps the investigation proposed:", *(f"- {step}" for step in next_steps)]
    lines += section("Follow-ups", "follow_ups", proposed if next_steps else [])
    lines += ["## Sources", "", *_sources(facts, thread_url)]
    return "\n".join(lines).rstrip() + "\n"


def timeline_rows(timeline: Sequence[TimelineEntry]) -> list[str]:
    """The timeline as a Markdown table, one row per recorded event or message, in order."""
    rows = ["| Time (UTC) | Who | What |", "| --- | --- | --- |"]
    return rows + [f"| {_when(entry.at)} | {escaped(entry.who)} | {escaped(entry.what)} |" for entry in timeline]


def facts_text(facts: IncidentFacts) -> str:
    """The facts as the model is given them (and as a person could check them): every section's recorded lines."""
    parts = [
        f"Asked: {facts.record.task}",
        *_verdict_summary(facts),
        *_impact_window(facts),
        *_root_cause(facts),
        *_detection(facts),
        *_resolution(facts),
        "Timeline:",
        *timeline_rows(facts.timeline),
    ]
    return "\n".join(parts)


def _banner(facts: IncidentFacts, narrative: Narrative, model: str, now: datetime) -> list[str]:
    made = f"> **Draft** by OpsAgent, {_when(now)} UTC, from run `{facts.record.run_id}`."
    recorded = "> The impact window, timeline, actions and approvals are the recorded facts (audit log, trace, thread)."
    if narrative.sections:
        how = f"> Sections marked ✎ were drafted by the model {model} from those facts: check every claim."
    else:
        how = (
            f"> No narrative was drafted ({escaped(narrative.problem)}): this draft holds only the recorded facts; the narrative "
            "sections are for people to write."
        )
    return [made, recorded, how]


def _verdict_summary(facts: IncidentFacts) -> list[str]:
    trace = facts.trace
    if trace is None:
        return ["The investigation's trace could not be read."]
    if trace.findings is not None:
        return [f"**The investigation concluded:** {escaped(trace.findings.summary)}"]
    last = f" Its last word, unchecked: {escaped(trace.partial_answer)}" if trace.partial_answer else ""
    title = stop_title(trace.stop_reason).said()
    return [f"**The investigation ended without an answer:** {title} ({trace.stop_reason.value}).{last}"]


def _impact_window(facts: IncidentFacts) -> list[str]:
    started, resolved = facts.started_at, facts.resolved_at
    fired = any(entry.kind == "alert_fired" for entry in facts.timeline)
    since = "the first alert started firing" if fired else "the investigation was asked for (the first sign recorded)"
    lines = [f"- **Start:** {_when(started)} UTC, when {since}."]
    if resolved is not None:
        minutes = max(0, round((resolved - started).total_seconds() / 60))
        lines += [f"- **End:** {_when(resolved)} UTC, when the alert resolved.", f"- **Duration:** {minutes} minutes."]
    else:
        lines.append("- **End:** not recorded: fill it in.")
    return lines


def _root_cause(facts: IncidentFacts) -> list[str]:
    trace = facts.trace
    findings = trace.findings if trace is not None else None
    if trace is None or findings is None:
        return []
    check = trace.evidence_check
    level = check.confidence if check is not None else findings.confidence
    lines = [f"**Recorded verdict:** {escaped(findings.root_cause or findings.summary)}"]
    if level is not None:
        lowered = f" ({escaped(check.lowered_because)})" if check is not None and check.lowered else ""
        if check is not None and check.derived:  # the model stated none: the gate's, from the grounded claims
            lowered = f" (derived: {escaped(check.derived_because)})"
        lines.append(f"**Confidence**, as the evidence gate checked it: {level.value}{lowered}")
    claims = check.evidence if check is not None else ()
    if claims:
        lines += ["", "Evidence (steps of the trace):"]
        lines += [
            f"- {escaped(c.text)} (steps {', '.join(map(str, c.steps)) or 'none'}: {c.status.value})" for c in claims
        ]
    if findings.ruled_out:
        lines += ["", "Ruled out:", *(f"- {escaped(r.hypothesis)}" for r in findings.ruled_out)]
    return lines


def _detection(facts: IncidentFacts) -> list[str]:
    record = facts.record
    if record.alert_labels:
        labels = "; ".join(", ".join(f"{k}={v}" for k, v in sorted(alert.items())) for alert in record.alert_labels[:5])
        return [f"Alertmanager opened the investigation: {escaped(labels)}."]
    who = escaped(facts.named(record.requested_by)) if record.requested_by else "Someone"
    return [f"{who} asked OpsAgent to investigate at {_when(record.created_at)} UTC."]


def _resolution(facts: IncidentFacts) -> list[str]:
    trace = facts.trace
    actions = actions_of(trace.steps, trace.stop_reason) if trace is not None else ()

    def person(who: str) -> str:
        return escaped(facts.named(who))

    def moment(at: datetime) -> str:
        return f"{_when(at)} UTC"

    lines = [
        f"- Step {action.step}: {escaped(action.call)}: {action.said(person=person, moment=moment, text=escaped)}"
        for action in actions
    ]
    for effect in facts.side_effects:
        ended = f", finished {_when(effect.finished_at)} UTC" if effect.finished_at else ""
        lines.append(
            f"- Side effect {escaped(effect.tool)} (step {effect.step}): {effect.state}, sent {_when(effect.started_at)} UTC"
            f"{ended}{f': {escaped(effect.outcome)}' if effect.outcome else ''}"
        )
    if not lines:
        return ["No action was proposed or taken through OpsAgent."]
    return [
        "Actions proposed through OpsAgent and what came of each (from the trace and the side-effect journal):",
        *lines,
    ]


def _sources(facts: IncidentFacts, thread_url: str) -> list[str]:
    record, trace = facts.record, facts.trace
    if not record.channel:  # asked at a terminal (`opsagent investigate`), or known from its trace file only
        lines = ["- Thread: none (the investigation was not asked for in Slack)"]
        kept = f"the file {escaped(facts.trace_file)}" if facts.trace_file else "kept in the run store"
        lines.append(f"- Run `{record.run_id}` (its trace: {kept})")
    else:
        where = thread_url or f"channel {record.channel}, ts {record.thread_ts}"
        lines = [f"- Thread: {where}"]
        lines.append(
            f"- Run `{record.run_id}` (its trace is the file opsagent-trace-{record.run_id}.json in the thread)"
        )
    if trace is not None and trace.stop_reason is not StopReason.FINISH:
        lines.append(f"- The investigation's end: {stop_title(trace.stop_reason).said()} ({trace.stop_reason.value})")
    up = sum(1 for f in facts.feedback if f.rating == "up")
    down = [f for f in facts.feedback if f.rating == "down"]
    said = "; ".join(escaped(f.reason) for f in down if f.reason)
    lines.append(f"- Feedback on the answer: 👍 {up}, 👎 {len(down)}{f' ({said})' if said else ''}")
    history = facts.history
    read = f"{len(history.messages)} messages by people" if not history.problem else f"not read: {history.problem}"
    lines.append(f"- The thread's messages: {read}")
    return lines


def incident_title(facts: IncidentFacts) -> str:
    """What the incident is called: its alert's name, else what was asked (cut short)."""
    names = [alert["alertname"] for alert in facts.record.alert_labels if alert.get("alertname")]
    first = names[0] if names else " ".join(facts.record.task.split())
    return first if len(first) <= 90 else first[:89] + "…"


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
