"""`similar_incidents`: the remembered incidents closest to this one, each worded as a hypothesis to re-check.

A past root cause is a lead, never a conclusion: the same symptom often has another cause, and a past answer may
have been wrong (a 👎 says so, with its correction). The output is tool output like any other: redacted by
dispatch, fenced as data by the loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Annotated

from pydantic import Field

from kernel import SourceLink, StopReason, Tool, ToolFailure, ToolOutput, tool_from_function
from opsagent_tools.memory.records import IncidentMemory, PastIncident

MAX_RESULTS = 10
TEXT_CHARS = 600
"""Each remembered text (task, summary, root cause, correction) is cut to this in a listing."""
CAUTION = (
    "Each is a hypothesis to re-check against this incident's own evidence, never a conclusion: the same symptom "
    "often has another cause, and a past answer may have been wrong."
)


def similar_incidents_tool(memory: IncidentMemory, *, now: Callable[[], datetime]) -> Tool:
    """`similar_incidents` over `memory`; ages are counted from `now()`."""

    async def similar_incidents(
        query: Annotated[
            str,
            Field(
                min_length=1,
                description="The symptom and names to look for, e.g. 'checkout 5xx after deploy' or an alert name.",
            ),
        ],
        service: Annotated[
            str | None, Field(description="Only incidents of this service (as the metrics and logs name it).")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_RESULTS, description="Most incidents listed.")] = 5,
    ) -> ToolOutput:
        if not re.search(r"\w", query):
            raise ToolFailure(f"the query {query!r} has no words.", hint="Name a symptom, a service or an alert.")
        wanted = service.strip() if service and service.strip() else None
        found = await memory.similar_incidents(query, service=wanted, limit=limit)
        scope = f" of service {wanted}" if wanted else ""
        if not found:
            text = (
                f"No remembered incident{scope} matches {query!r}. This looks new to the memory: investigate from "
                "the evidence (try other words, or leave out the service, to search wider)."
            )
            return ToolOutput(text, headline=f"no past incident{scope} like this")
        moment = now()
        lines = [f"Past incidents{scope} like {query!r}, best match first ({len(found)}). {CAUTION}"]
        for number, incident in enumerate(found, 1):
            lines += ["", *_entry(number, incident, moment)]
        best = found[0]
        headline = f"{len(found)} past incident{'s' if len(found) > 1 else ''} like this; closest {_age(best, moment)}"
        if best.disputed:
            headline += " (its answer was rated wrong)"
        links = tuple(
            SourceLink(f"past incident {_age(incident, moment)}", incident.thread_url)
            for incident in found
            if incident.thread_url
        )
        return ToolOutput("\n".join(lines), headline=headline, links=links)

    similar_incidents.__doc__ = f"""Search the memory of past incidents (earlier investigations here): the closest
    ones with what they concluded, their root cause and its confidence, what people said of the answer (👍/👎 and
    corrections) and how long ago. Use it early, once you know the symptom: a past incident with the same
    signature suggests where to look first, and a past cause that was ruled wrong warns you off it. {CAUTION}
    Cite the past incident only for what it suggested; the evidence must come from this incident's own tools."""

    return tool_from_function(
        similar_incidents,
        summary="Find past incidents like this one, with their verdicts",
        timeout=30.0,
        returns="past incidents with their verdict, feedback and age, as leads",
    )


def _entry(number: int, incident: PastIncident, now: datetime) -> list[str]:
    """One incident: when, what was asked, where, what it concluded (as a hypothesis), feedback, thread."""
    when = incident.finished_at.strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"{number}. {_age(incident, now)} ({when}), run {incident.run_id}: asked {_clip(incident.task)!r}"]
    where = []
    if incident.services:
        where.append(f"services: {', '.join(incident.services)}")
    if incident.labels:
        where.append(f"alert labels: {_clip(', '.join(incident.labels))}")
    if where:
        lines.append("   " + " · ".join(where))
    if incident.outcome is StopReason.FINISH:
        if incident.summary:
            lines.append(f"   it concluded then: {_clip(incident.summary)}")
        if incident.root_cause:
            confidence = f" (confidence then: {incident.confidence.value})" if incident.confidence else ""
            lines.append(f"   its root cause, a hypothesis to re-check now: {_clip(incident.root_cause)}{confidence}")
    else:
        lines.append(f"   it ended without an answer ({incident.outcome.value})")
        if incident.summary:
            lines.append(f"   its last word, unchecked: {_clip(incident.summary)}")
    lines.append(f"   {_feedback(incident)}")
    if incident.thread_url:
        lines.append(f"   thread: {incident.thread_url}")
    return lines


def _feedback(incident: PastIncident) -> str:
    if not incident.helpful and not incident.wrong:
        return "feedback: none (nobody rated the answer)"
    counts = f"rated helpful by {incident.helpful}, wrong by {incident.wrong}"
    if not incident.disputed:
        return f"feedback: {counts}"
    corrected = "; ".join(f"{_clip(reason)!r}" for reason in incident.corrections)
    said = f"; the correction: {corrected} (a lead to check, like the rest)" if corrected else ""
    return f"feedback: {counts}: its answer was judged WRONG, do not reuse its root cause{said}"


def _age(incident: PastIncident, now: datetime) -> str:
    seconds = max(0.0, (now - incident.finished_at).total_seconds())
    if seconds < 3600:
        return f"{max(1, int(seconds // 60))} min ago"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} days ago"


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TEXT_CHARS else flat[: TEXT_CHARS - 1] + "…"
