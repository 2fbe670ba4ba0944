"""The runbooks family: `search_runbooks` and `read_runbook` over one library (the one whose runbooks are named at
the start of runs), and its `opsagent check` (the library read now, each runbook skipped)."""

from __future__ import annotations

from collections.abc import Sequence

from kernel import Tool
from opsagent_tools.check_result import CheckResult
from opsagent_tools.family import ToolFamily
from opsagent_tools.runbooks.check import check_runbooks
from opsagent_tools.runbooks.library import RunbookLibrary
from opsagent_tools.runbooks.tools import runbook_tools


class RunbooksFamily(ToolFamily):
    """`[knowledge]` runbooks, as the library the caller made of them."""

    keywords = ("runbook", "playbook", "procedure", "alert", "on-call", "how to")

    def __init__(self, library: RunbookLibrary) -> None:
        self.library = library

    def tools(self) -> Sequence[Tool]:
        return runbook_tools(self.library)

    async def check(self) -> list[CheckResult]:
        return await check_runbooks(self.library)
