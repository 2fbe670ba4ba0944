"""`recent_changes`: the sources the other families offer, read at once, as one timeline.

Every source reads a backend another family configures (the cluster, the repositories, Prometheus); none is required,
and this package knows none of them: each family makes its own sources (`ToolFamily.change_sources`).
"""

# No `from __future__ import annotations`: the tool's argument descriptions are built at run time.

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Annotated

from pydantic import Field

from kernel import Tool, ToolOutput, tool_from_function
from opsagent_tools.changes.settings import NO_SOURCES, ChangesSettings
from opsagent_tools.changes.timeline import ChangeQuery, ChangeSource, read_sources, timeline_output
from opsagent_tools.time_words import utc_now, window_seconds

DEFAULT_WINDOW = "2h"
TOOL_MARGIN_S = 5.0
"""The tool's timeout beyond its sources' budget: time to merge and render what they found."""


def recent_changes_tool(
    settings: ChangesSettings,
    sources: Sequence[ChangeSource],
    *,
    now: Callable[[], datetime] | None = None,
) -> Tool:
    """The `recent_changes` tool over `sources`; `now` fixes the clock in tests. Without a source, a ValueError
    now, at start-up: a timeline that can only ever be empty would mislead."""
    if not sources:
        raise ValueError(NO_SOURCES)
    clock = now or utc_now
    offered = ", ".join(source.what for source in sources)

    async def recent_changes(
        service: Annotated[
            str | None,
            Field(
                description="The service, as its deployment, repository or metrics name it, e.g. order-service; "
                "leave out for every service (when the cause may be a dependency)."
            ),
        ] = None,
        window: Annotated[
            str, Field(description="How far back from now: 30m, 2h (default), 1d … up to 7d. Start wide.")
        ] = DEFAULT_WINDOW,
    ) -> ToolOutput:
        end = clock()
        wanted = service.strip() if service and service.strip() else None
        query = ChangeQuery(wanted, end - timedelta(seconds=window_seconds(window)), end)
        chosen = [source for source in sources if source.about(wanted)]
        skipped = [source.name for source in sources if not source.about(wanted)]
        outcomes = await read_sources(chosen, query, settings.timeout_s)
        return timeline_output(query, outcomes, skipped, max_entries=settings.max_entries)

    recent_changes.__doc__ = f"""See what changed around the incident: one timeline, newest first, merged from
    every configured source ({offered}). Use it EARLY, right after confirming the symptom and when it started: a
    change just before the onset is the first suspect, then compare_refs or k8s_rollout_history shows it in full.
    Each line is when (t-12m is 12 minutes before now), the source, what changed (an image or a memory limit, a
    version, a tag or merge, a deployment, an alert that fired) and a link when there is one.
    Pitfalls: a change near the onset can be a coincidence (check that the errors fit it); a source listed as not
    read is unknown, not empty; no change at all points to load, a dependency or the infrastructure."""

    return tool_from_function(
        recent_changes,
        summary="List what changed around a service lately: deploys, config, merges, alerts",
        timeout=settings.timeout_s + TOOL_MARGIN_S,
        returns="a head line with the counts, sources that could not be read, one line per change "
        "('t-12m kubernetes: deployment/x in shop: revision 7 … rolled out: app image a → b'), then what was checked",
    )
