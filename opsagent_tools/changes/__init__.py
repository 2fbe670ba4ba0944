"""What changed, as one timeline: rollouts, tags and merges, GitHub deployments and releases, versions, fired alerts.

`recent_changes` reads every source the other families offer at once (each optional, each failing alone) and merges
them newest first. The sources live in their families (metrics, kubernetes, repos); this package owns what a source
is (`ChangeSource`), the timeline and the tool.
"""

from opsagent_tools.changes.family import ChangesFamily
from opsagent_tools.changes.settings import ChangesSettings
from opsagent_tools.changes.timeline import (
    Change,
    ChangeQuery,
    ChangeSource,
    SourceKind,
    SourceResult,
    one_line,
)
from opsagent_tools.changes.tools import recent_changes_tool

__all__ = [
    "Change",
    "ChangeQuery",
    "ChangeSource",
    "ChangesFamily",
    "ChangesSettings",
    "SourceKind",
    "SourceResult",
    "one_line",
    "recent_changes_tool",
]
