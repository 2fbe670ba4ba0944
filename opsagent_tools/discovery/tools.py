"""The `discover` tool: one entry point over every configured source's kinds, answered through the cache.

A source registers itself by what it offers: its kinds (name, what each lists, what `filter` means) and one
method that lists a kind; the tool builds its argument type and description from them.
"""

# No `from __future__ import annotations`: the tool's `kind` type is built from the sources at run time, and the
# kernel reads it with get_type_hints, which cannot see this module's local variables.

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal, Protocol

from pydantic import Field

from kernel import Tool, ToolFailure, ToolOutput, tool_from_function
from opsagent_tools.discovery.cache import DiscoveryCache
from opsagent_tools.discovery.settings import DiscoverySettings

HEADLINE_CHARS = 120


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of listing a source offers."""

    name: str
    """e.g. prometheus_labels; unique across sources."""
    lists: str
    """What it lists, for the model."""
    filter: str
    """What `filter` means for it, and what leaving it out lists."""
    filter_required: bool = False


class DiscoverySource(Protocol):
    """A backend family's contribution to `discover`."""

    @property
    def kinds(self) -> Sequence[Kind]:
        """The kinds this source lists."""
        ...

    async def discover(self, kind: str, filter: str | None) -> str:
        """The listing of `kind` (one of `kinds`), as text for the model; a `ToolFailure` says what to change."""
        ...


def listing_heading(text: str) -> str:
    """A listing's heading for people: its first line up to the names ("Metric names in the last 6h (34)"), or its
    first sentence when it says nothing was found."""
    line = text.strip().split("\n", 1)[0].rstrip(":")
    ends = [i for i in (line.find(": "), line.find(". ") + 1) if i > 0]
    head = line[: min(ends)] if ends else line
    return head if len(head) <= HEADLINE_CHARS else head[: HEADLINE_CHARS - 1] + "…"


def discover_tool(sources: Sequence[DiscoverySource], settings: DiscoverySettings) -> Tool | None:
    """`discover` over `sources`, or None when no source offers a kind."""
    offered = {kind.name: (kind, source) for source in sources for kind in source.kinds}
    if not offered:
        return None
    cache = DiscoveryCache(settings.ttl_s, settings.max_entries)
    kind_type = Literal[tuple(offered)]  # type: ignore[valid-type]

    async def discover(
        kind: Annotated[kind_type, Field(description="What to list; see the kinds in the description.")],
        filter: Annotated[
            str | None, Field(description="Narrows the listing; what it means depends on the kind.")
        ] = None,
    ) -> ToolOutput:
        spec, source = offered[kind]
        wanted = filter.strip() if filter and filter.strip() else None
        if spec.filter_required and wanted is None:
            raise ToolFailure(f"discover(kind={kind!r}) needs a filter: {spec.filter}.")
        key = (kind, wanted)
        text = cache.get(key)
        if text is None:
            text = await source.discover(kind, wanted)
            cache.put(key, text)
        return ToolOutput(text, headline=listing_heading(text))

    listed = "\n".join(f"- {kind.name}: {kind.lists}. filter: {kind.filter}." for kind, _ in offered.values())
    discover.__doc__ = f"""List what exists in the monitoring backends and the cluster, so that you query real names
    instead of guessing them: metric names, label names and values, log labels, indices and fields, namespaces and
    workloads. Call it when a name is
    uncertain, or when a query found nothing (a wrong label or service name is the usual cause). Kinds:
{listed}"""
    return tool_from_function(
        discover,
        summary="List the services, namespaces and other names that exist",
        timeout=30.0,
        returns="the names that exist, counted and capped",
    )
