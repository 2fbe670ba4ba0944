"""`discover`'s family: one tool over the listings the other families offer (`discovery`), asked when it is built.

It reaches nothing of its own: every listing is read from a backend another family configures and checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kernel import Tool
from opsagent_tools.check_result import CheckResult
from opsagent_tools.discovery.check import check_discovery
from opsagent_tools.discovery.settings import DiscoverySettings
from opsagent_tools.discovery.tools import DiscoverySource, discover_tool


class OffersListings(Protocol):
    """A family as this one reads it (every `ToolFamily` is one)."""

    def discovery(self, settings: DiscoverySettings) -> DiscoverySource | None:
        """Its listings, or None."""
        ...


class DiscoveryFamily:
    """`[tools.discover]` over `families`."""

    keywords = ("discover", "list", "names", "labels", "services", "namespaces", "which", "exists")

    def __init__(self, settings: DiscoverySettings, families: Sequence[OffersListings]) -> None:
        self.settings, self.families = settings, families

    def tools(self) -> Sequence[Tool]:
        """`discover`, or nothing when no family has a listing."""
        tool = discover_tool(self._sources(), self.settings)
        return [tool] if tool is not None else []

    def discovery(self, settings: DiscoverySettings) -> None:
        """Nothing more to list: it is the listing."""
        return None

    def change_sources(self, settings: object) -> tuple[()]:
        """No changes to read."""
        return ()

    async def check(self) -> list[CheckResult]:
        """What `discover` covers; each listing's backend is checked by its family. A family that cannot be set up
        fails this line too (with its own words), as `recent_changes` does: `discover` would not start."""
        try:
            return check_discovery(self._sources())
        except ValueError as exc:
            return [CheckResult("discover", False, str(exc))]

    def _sources(self) -> list[DiscoverySource]:
        return [source for family in self.families if (source := family.discovery(self.settings)) is not None]
