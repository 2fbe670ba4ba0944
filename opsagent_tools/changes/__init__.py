"""What changed, as one timeline: rollouts, tags and merges, GitHub deployments and releases, versions, fired alerts.

`recent_changes` reads every configured source at once (each optional, each failing alone) and merges them newest first.
"""

from opsagent_tools.changes.settings import ChangesSettings
from opsagent_tools.changes.tools import change_sources, check_changes, recent_changes_tool

__all__ = ["ChangesSettings", "change_sources", "check_changes", "recent_changes_tool"]
