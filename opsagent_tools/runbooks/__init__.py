"""Runbooks: Markdown files with front matter, from a directory or a git repository kept in sync, searched by BM25.

`search_runbooks` and `read_runbook` are the tools; `runbooks_note` names the runbooks that may apply to a
task in its first message. Runbooks are data: what they say to do goes through the policy and an approval.
"""

from opsagent_tools.runbooks.briefing import runbooks_note
from opsagent_tools.runbooks.family import RunbooksFamily
from opsagent_tools.runbooks.library import RunbookLibrary
from opsagent_tools.runbooks.settings import RunbookSettings
from opsagent_tools.runbooks.tools import runbook_tools

__all__ = ["RunbookLibrary", "RunbookSettings", "RunbooksFamily", "runbook_tools", "runbooks_note"]
