"""Full-text search over a set of runbooks: SQLite FTS5 in memory, ranked by BM25 with the title weighted most.

No embedding model is needed (and none could be downloaded on our machines): the words operators search with
are the words runbooks are written in, and BM25 over stemmed words ranks them well.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from opsagent_tools.runbooks.documents import Runbook

WEIGHTS = {"id": 2.0, "title": 10.0, "meta": 5.0, "body": 1.0}
"""BM25 weight of each column: a word in the title counts ten times one in the body."""
MAX_TERMS = 32
"""Words of a query used; the rest are ignored."""
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Hit:
    """One runbook a search found, and how well it matched (higher is better)."""

    runbook: Runbook
    score: float


class RunbookIndex:
    """An immutable index over `runbooks`; a new set of runbooks gets a new index."""

    def __init__(self, runbooks: Sequence[Runbook]) -> None:
        self.runbooks = tuple(sorted(runbooks, key=lambda r: r.id))
        self._by_id = {runbook.id: runbook for runbook in self.runbooks}
        # Built in a worker thread, then read on the event loop's: the connection is only ever read after this.
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        columns = ", ".join(WEIGHTS)
        self._db.execute(f"CREATE VIRTUAL TABLE runbooks USING fts5({columns}, tokenize='porter unicode61')")
        self._db.executemany(
            "INSERT INTO runbooks (rowid, id, title, meta, body) VALUES (?, ?, ?, ?, ?)",
            [(n, r.id, r.title, _meta(r), r.body) for n, r in enumerate(self.runbooks)],
        )

    def __len__(self) -> int:
        return len(self.runbooks)

    def get(self, runbook_id: str) -> Runbook | None:
        """The runbook with this id, or None."""
        return self._by_id.get(runbook_id.strip().removesuffix(".md"))

    def ids(self) -> list[str]:
        """Every runbook id, sorted."""
        return list(self._by_id)

    def search(self, query: str, limit: int) -> list[Hit]:
        """The runbooks matching any word of `query`, best first; [] when it has no words."""
        terms = list(dict.fromkeys(word.lower() for word in _WORD.findall(query)))[:MAX_TERMS]
        if not terms or not self.runbooks:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        weights = ", ".join(f"{w:g}" for w in WEIGHTS.values())
        rows = self._db.execute(
            f"SELECT rowid, bm25(runbooks, {weights}) AS rank FROM runbooks WHERE runbooks MATCH ? "
            "ORDER BY rank LIMIT ?",
            (match, limit),
        ).fetchall()
        return [Hit(self.runbooks[rowid], -rank) for rowid, rank in rows]


def _meta(runbook: Runbook) -> str:
    """The front matter as searchable text: services, alert names, tags and when to use it."""
    return " ".join([*runbook.services, *runbook.alerts, *runbook.tags, runbook.when_to_use])
