"""`opsagent check` for runbooks: the library read now, as the bot reads it at start-up, and each runbook skipped."""

from __future__ import annotations

from opsagent_tools.check_result import CheckResult
from opsagent_tools.runbooks.library import RunbookLibrary


async def check_runbooks(library: RunbookLibrary) -> list[CheckResult]:
    """The runbooks read now: how many, from where, the last sync; then one failure per runbook skipped."""
    status = await library.refresh()
    results = [CheckResult("runbooks", status.error is None and status.loaded_at is not None, status.describe())]
    return results + [CheckResult(f"runbook {skipped.path}", False, skipped.problem) for skipped in status.skipped]
