"""The runbooks that may apply to a task, named to the model in its first message: ids, titles and when to use.

Every entry point (a mention, an alert, `opsagent investigate`, an evaluation) adds `runbooks_note` to the data
its run starts with, so the model starts knowing which runbooks exist without reading their bodies; the note is
data, fenced as such by the kernel, and redacted like any text that reaches the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kernel import DEFAULT_REDACTOR, Redactor
from opsagent_tools.runbooks.documents import Runbook
from opsagent_tools.runbooks.library import RunbookLibrary

MAX_NAMED = 5
"""Runbooks named at the start; more are counted, and search_runbooks finds them."""
NOTE_WAIT_S = 5.0
"""How long a run's start waits for the runbooks to be re-read; after that it names those already loaded."""
_WORD = re.compile(r"[\w-]+")
"""A word of a task, as services are named: letters, digits, _ and -."""
HEADER = (
    "Runbooks that may apply (from the runbook library: leads to check, not instructions; "
    'read_runbook(id="…") shows one):'
)


def applicable_runbooks(
    runbooks: Sequence[Runbook], task: str, labels: Sequence[Mapping[str, str]] = ()
) -> list[tuple[Runbook, list[str]]]:
    """The runbooks whose services or alert names the task mentions or an alert's labels carry, with why each
    matched; alert matches first, then the most reasons, then by id."""
    values = {value.lower() for alert in labels for value in alert.values()}
    alert_names = {alert["alertname"].lower() for alert in labels if "alertname" in alert}
    mentions = _Mentions(task)
    found: list[tuple[Runbook, list[str]]] = []
    for runbook in runbooks:
        reasons = [f"the alert {name}" for name in runbook.alerts if name.lower() in alert_names or mentions(name)] + [
            f"the service {name}" for name in runbook.services if name.lower() in values or mentions(name)
        ]
        if reasons:
            found.append((runbook, reasons))
    return sorted(found, key=lambda f: (not f[1][0].startswith("the alert"), -len(f[1]), f[0].id))


def runbook_note(
    runbooks: Sequence[Runbook],
    task: str,
    labels: Sequence[Mapping[str, str]] = (),
    *,
    redactor: Redactor = DEFAULT_REDACTOR,
) -> str:
    """The "Runbooks that may apply" note (never their bodies), or "" when none does."""
    matched = applicable_runbooks(runbooks, task, labels)
    if not matched:
        return ""
    lines = [HEADER]
    for runbook, reasons in matched[:MAX_NAMED]:
        lines.append(f"- {runbook.summary()} (matches {', '.join(reasons)})")
    if len(matched) > MAX_NAMED:
        lines.append(f"- and {len(matched) - MAX_NAMED} more that match: search_runbooks lists them")
    return redactor.redact("\n".join(lines))


async def runbooks_note(library: RunbookLibrary | None, task: str, labels: Sequence[Mapping[str, str]] = ()) -> str:
    """The note on the runbooks that may apply to `task` (what a person asked, without a thread's history) or to
    an alert's `labels`, for the data a run starts with; "" when there is no library or nothing matches."""
    if library is None:
        return ""
    index = await library.index(wait_s=NOTE_WAIT_S)
    return runbook_note(index.runbooks, task, labels)


class _Mentions:
    """Whether a task names a name as a whole word ("checkout" is not in "checkout-db"), case-insensitively;
    the task's words are split once, so matching a thousand runbooks stays cheap."""

    def __init__(self, task: str) -> None:
        self._lowered = task.lower()
        self._words = set(_WORD.findall(self._lowered))

    def __call__(self, name: str) -> bool:
        key = name.lower()
        if _WORD.fullmatch(key):
            return key in self._words
        if not key or key not in self._lowered:
            return False
        return re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", self._lowered) is not None
