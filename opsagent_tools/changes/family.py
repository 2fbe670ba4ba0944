"""The change timeline's family: `recent_changes` over the sources the other families offer, and its check.

It is made of the others' contributions (`change_sources`), asked when the tool is built or checked, so a backend
that cannot be set up fails there, and is read in the timeline's order: each family's sources in its own order, the
families by the first kind they read (alerts and versions, then rollouts, then the repositories).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from kernel import Tool
from opsagent_tools.changes.check import check_changes
from opsagent_tools.changes.settings import ChangesSettings
from opsagent_tools.changes.timeline import KIND_ORDER, ChangeSource
from opsagent_tools.changes.tools import recent_changes_tool
from opsagent_tools.check_result import CheckResult


class OffersChanges(Protocol):
    """A family as this one reads it (every `ToolFamily` is one)."""

    def change_sources(self, settings: ChangesSettings) -> Sequence[ChangeSource]:
        """Its sources, as far as `settings` leave each on."""
        ...


class ChangesFamily:
    """`[tools.changes]` over `families`; the tool reads "now" from `now`."""

    keywords = (
        "deploy",
        "deployed",
        "release",
        "rollout",
        "went out",
        "version",
        "change",
        "changed",
        "config",
        "timeline",
        "flag",
    )

    def __init__(
        self, settings: ChangesSettings, families: Sequence[OffersChanges], *, now: Callable[[], datetime]
    ) -> None:
        self.settings, self.families, self.now = settings, families, now

    def sources(self) -> list[ChangeSource]:
        """Every family's sources, in the timeline's order."""
        offered = [sources for family in self.families if (sources := family.change_sources(self.settings))]
        ranked = sorted(offered, key=lambda sources: min(KIND_ORDER[source.kind] for source in sources))
        return [source for sources in ranked for source in sources]

    def tools(self) -> Sequence[Tool]:
        """`recent_changes`; a ValueError when no family offers a source."""
        return [recent_changes_tool(self.settings, self.sources(), now=self.now)]

    def discovery(self, settings: object) -> None:
        """Nothing to list: the backends its sources read are listed by the families that own them."""
        return None

    def change_sources(self, settings: ChangesSettings) -> Sequence[ChangeSource]:
        """None of its own: it is the timeline."""
        return ()

    async def check(self) -> list[CheckResult]:
        """Each source read once (`check_changes`); a family whose sources cannot even be set up fails here."""
        try:
            sources = self.sources()
        except ValueError as exc:
            return [CheckResult("changes", False, str(exc))]
        return [await check_changes(sources, self.now(), budget_s=self.settings.timeout_s)]
