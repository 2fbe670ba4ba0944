"""`discover`'s line in `opsagent check`: which listings the model can ask for, and from which families.

It reaches nothing of its own (each listing's backend is checked by its family), so its line says what `discover`
covers: a person reading `check` learns what the model can list before it queries.
"""

from __future__ import annotations

from collections.abc import Sequence

from opsagent_tools.check_result import CheckResult
from opsagent_tools.discovery.tools import DiscoverySource


def check_discovery(sources: Sequence[DiscoverySource]) -> list[CheckResult]:
    """One line naming the kinds `discover` lists; none when no family offers a listing (there is no `discover`)."""
    kinds = [kind.name for source in sources for kind in source.kinds]
    if not kinds:
        return []
    return [CheckResult("discover", True, f"lists {len(kinds)} kinds: {', '.join(kinds)}")]
