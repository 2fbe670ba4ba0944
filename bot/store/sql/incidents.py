"""The memory of past incidents in SQL: the `IncidentStore` port over one `Database` (remembering a finished run,
full-text search, listing and forgetting).

The SQL is written once where SQLite and PostgreSQL agree; only the search differs (FTS5's `MATCH` and bm25, or a
`tsvector` matched by a `tsquery` and ranked by `ts_rank`), chosen by the store's dialect.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, assert_never

from bot.store.ports import RunLookup
from bot.store.records import RunRecord, RunStatus
from bot.store.sql.database import Database
from bot.store.sql.schema import Dialect
from kernel import DEFAULT_REDACTOR
from opsagent_tools.memory import PastIncident

MAX_TERMS = 32
"""Words of a query searched for; the rest are left out (a query is a symptom, not a document)."""
_WORD = re.compile(r"\w+")
_STOP_WORDS_TEXT = (
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself "
    "it its itself they them their theirs themselves what which who whom this that these those am is are was were be "
    "been being have has had having do does did doing a an the and but if or because as until while of at by for with "
    "about against between into through during before after above below to from up down in out on off over under "
    "again further then once here there when where why how all any both each few more most other some such no nor not "
    "only own same so than too very s t can will just don should now"
)
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
"""PostgreSQL's English stop words, left out of every query, so a word like "a" matches nothing on either store."""
_INCIDENT_COLUMNS = (
    "run_id",
    "task",
    "services",
    "labels",
    "summary",
    "root_cause",
    "confidence",
    "outcome",
    "thread_url",
    "finished_at",
)
_FEEDBACK_COUNTS = (
    "(SELECT COUNT(*) FROM feedback WHERE feedback.run_id = incidents.run_id AND rating = 'up') AS helpful, "
    "(SELECT COUNT(*) FROM feedback WHERE feedback.run_id = incidents.run_id AND rating = 'down') AS wrong"
)
_SELECT = f"SELECT {', '.join(f'incidents.{column}' for column in _INCIDENT_COLUMNS)}, {_FEEDBACK_COUNTS}"


class Remembered(StrEnum):
    """What `runs.remembered` says of a finished run."""

    NOT_YET = ""
    INDEXED = "indexed"
    FORGOTTEN = "forgotten"
    """Deleted by `opsagent memory forget`: never indexed again."""


class SqlIncidents:
    """`IncidentStore` on the `incidents` table and its full-text index, marking runs in `runs.remembered`."""

    def __init__(self, database: Database, runs: RunLookup) -> None:
        self._db = database
        self._runs = runs

    async def remember_incident(self, incident: PastIncident) -> bool:
        """Remember (or update) a finished run's incident, its texts redacted; False, and nothing kept, when its run
        is not in the store or was forgotten on purpose (`forget_incident`)."""
        marked = await self._db.execute(
            "UPDATE runs SET remembered = $2 WHERE run_id = $1 AND remembered <> $3",
            incident.run_id,
            Remembered.INDEXED,
            Remembered.FORGOTTEN,
        )
        if marked == 0:
            return False
        redact = DEFAULT_REDACTOR.redact
        await self._db.execute(
            f"INSERT INTO incidents ({', '.join(_INCIDENT_COLUMNS)}) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (run_id) DO UPDATE SET task = excluded.task, "
            "services = excluded.services, labels = excluded.labels, summary = excluded.summary, "
            "root_cause = excluded.root_cause, confidence = excluded.confidence, outcome = excluded.outcome, "
            "thread_url = excluded.thread_url, finished_at = excluded.finished_at",
            incident.run_id,
            redact(incident.task),
            _padded(incident.services),
            redact("\n".join(incident.labels)),
            redact(incident.summary),
            redact(incident.root_cause),
            incident.confidence.value if incident.confidence else "",
            incident.outcome.value,
            incident.thread_url,
            incident.finished_at,
        )
        return True

    async def search_incidents(
        self, query: str, *, since: datetime, service: str | None = None, limit: int = 5
    ) -> list[PastIncident]:
        """The incidents finished since `since` whose text matches any word of `query`, best first (of `service`
        only, when given); none for a query without words."""
        words = (word.lower() for word in _WORD.findall(query))
        terms = list(dict.fromkeys(word for word in words if word not in STOP_WORDS))[:MAX_TERMS]
        if not terms:
            return []
        args: list[Any] = [since, limit]
        where = "incidents.finished_at >= $1"
        if service is not None:
            args.append(f"% {_like_escaped(service.strip().lower())} %")
            where += " AND incidents.services LIKE $3 ESCAPE '\\'"
        match self._db.dialect:
            case Dialect.SQLITE:
                args.append(" OR ".join(f'"{term}"' for term in terms))
                weights = ", ".join(("2.0", "2.0", "2.0", "1.0", "1.0"))
                sql = (
                    f"{_SELECT}, bm25(incident_search, {weights}) AS relevance FROM incident_search "
                    f"JOIN incidents ON incidents.seq = incident_search.rowid "
                    f"WHERE incident_search MATCH ${len(args)} AND {where} ORDER BY relevance, incidents.seq DESC LIMIT $2"
                )
            case Dialect.POSTGRES:
                args.append(" | ".join(terms))
                sql = (
                    f"{_SELECT}, ts_rank(document, to_tsquery('english', ${len(args)})) AS relevance FROM incidents "
                    f"WHERE document @@ to_tsquery('english', ${len(args)}) AND {where} "
                    "ORDER BY relevance DESC, incidents.seq DESC LIMIT $2"
                )
            case _:
                assert_never(self._db.dialect)
        return await self._incidents(await self._db.fetch(sql, *args))

    async def incidents(self, *, limit: int = 100) -> list[PastIncident]:
        """The remembered incidents, newest first."""
        rows = await self._db.fetch(
            f"{_SELECT} FROM incidents ORDER BY incidents.finished_at DESC, incidents.seq DESC LIMIT $1", limit
        )
        return await self._incidents(rows)

    async def count_incidents(self) -> int:
        """How many incidents are remembered."""
        rows = await self._db.fetch("SELECT COUNT(*) AS remembered FROM incidents")
        return int(rows[0]["remembered"])

    async def forget_incident(self, run_id: str) -> bool:
        """Forget one run's incident for good (its run and audit log stay); whether the run was known."""
        marked = await self._db.execute(
            "UPDATE runs SET remembered = $2 WHERE run_id = $1", run_id, Remembered.FORGOTTEN
        )
        deleted = await self._db.execute("DELETE FROM incidents WHERE run_id = $1", run_id)
        return marked + deleted > 0

    async def forget_incidents_before(self, moment: datetime) -> int:
        """Forget the incidents finished before `moment` (the retention); how many."""
        return await self._db.execute("DELETE FROM incidents WHERE finished_at < $1", moment)

    async def runs_to_remember(self, *, limit: int = 100) -> list[RunRecord]:
        """Finished runs not remembered yet (finished before the memory existed, or while it could not be
        written), oldest first."""
        rows = await self._db.fetch(
            "SELECT run_id FROM runs WHERE status = $1 AND remembered = $2 ORDER BY updated_at, run_id LIMIT $3",
            RunStatus.FINISHED,
            Remembered.NOT_YET,
            limit,
        )
        runs = [await self._runs.get_run(row["run_id"]) for row in rows]
        return [run for run in runs if run is not None]

    async def _incidents(self, rows: Sequence[dict[str, Any]]) -> list[PastIncident]:
        """The rows as incidents, with the reasons of their 👎 ratings (one more query, for all of them)."""
        ids = [row["run_id"] for row in rows]
        corrections: dict[str, list[str]] = {}
        if ids:
            marks = ", ".join(f"${n}" for n in range(1, len(ids) + 1))
            found = await self._db.fetch(
                f"SELECT run_id, reason FROM feedback WHERE run_id IN ({marks}) AND rating = 'down' AND reason <> '' "
                "ORDER BY at, user_id",
                *ids,
            )
            for row in found:
                corrections.setdefault(row["run_id"], []).append(row["reason"])
        return [
            PastIncident(
                run_id=row["run_id"],
                task=row["task"],
                services=tuple(row["services"].split()),
                labels=tuple(line for line in row["labels"].split("\n") if line),
                summary=row["summary"],
                root_cause=row["root_cause"],
                confidence=row["confidence"] or None,
                outcome=row["outcome"],
                finished_at=row["finished_at"],
                thread_url=row["thread_url"],
                helpful=row["helpful"],
                wrong=row["wrong"],
                corrections=tuple(corrections.get(row["run_id"], ())),
            )
            for row in rows
        ]


def _padded(services: Sequence[str]) -> str:
    """Services as the store keeps them: lower-case, space-separated and space-padded, so `LIKE '% name %'` finds
    one whole name."""
    names = dict.fromkeys(name.strip().lower() for name in services if name.strip() and " " not in name.strip())
    return f" {' '.join(names)} " if names else ""


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
