"""Grafana Loki as a log backend: LogQL built from the tool's arguments, sent over Loki's HTTP API.

Loki only finds streams by their labels, so the service label and the level filter are settings, and an empty answer names the labels that do exist.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from math import ceil
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field

from kernel import ToolFailure
from opsagent_tools.bounded_json import load_json
from opsagent_tools.logs.records import record_from_line
from opsagent_tools.logs.search import (
    LEVELS,
    LOGS_DOWN_HINT,
    LogQuery,
    LogRecord,
    LogSearchResult,
    canonical_level,
    level_words,
)
from opsagent_tools.logs.source_redaction import RecordRedaction
from opsagent_tools.names import unknown_name

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LABEL_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
QUERY_SYNTAX = (
    "a case-sensitive substring of the line (sent as LogQL |= \"…\"), 're:' and an RE2 regular expression "
    "(|~, add (?i) to ignore case), or a whole LogQL log query starting with '{' (sent as is; service and level "
    "are then ignored)"
)
"""How this backend reads `query`, for the tool description."""
LEVEL_FILTER_NOTES = {
    "line": "level matches level words in the line text, so a line that only mentions 'error' matches too",
    "label": "level is matched on the entry's level label",
    "json": "level is matched on the level field of JSON lines; lines that are not JSON are left out",
    "logfmt": "level is matched on the level key of logfmt lines",
}


class LokiSettings(BaseModel):
    """The Loki backend. Secrets are read from the environment variables named here, never stored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = "http://localhost:3100"
    """Loki's base URL (the API is under /loki/api/v1)."""
    service_label: str = Field(default="service_name", pattern=LABEL_NAME)
    """The stream label that names a service: `service_name` (Loki 3 / OpenTelemetry), often `app` or `job`."""
    level_filter: Literal["line", "label", "json", "logfmt"] = "line"
    """How `level` becomes LogQL. line: a case-insensitive word match on the line (``|~ `(?i)\\b(error|…)\\b` ``),
    works everywhere, may over-match; label: ``| <level_label>=~"(?i)(error|…)"`` on a stream label or structured
    metadata (Loki 3: `detected_level`); json / logfmt: parse the line first (``| json | level=~…``)."""
    level_label: str = Field(default="level", pattern=LABEL_NAME)
    """The label (or parsed key; nested JSON keys are joined with `_`) that holds the level, for label/json/logfmt."""
    tenant_id: str | None = None
    """Sent as X-Scope-OrgID on multi-tenant Loki."""
    username: str | None = None
    """Basic auth user (with `password_env`)."""
    password_env: str | None = None
    """Name of the environment variable holding the basic auth password."""
    token_env: str | None = None
    """Name of the environment variable holding a bearer token (Grafana Cloud, auth proxies)."""
    timeout_s: float = Field(default=10.0, gt=0)
    """Seconds each HTTP request may take."""


def quote(text: str) -> str:
    """A LogQL double-quoted string: JSON escaping is a valid subset of Go's string literal syntax."""
    return json.dumps(text, ensure_ascii=False)


def build_logql(q: LogQuery, settings: LokiSettings) -> str:
    """The log query for `q`: a stream selector on the service label, then line filters, then the level filter."""
    if q.query.startswith("{"):
        return q.query
    parts = [f"{{{settings.service_label}={quote(q.service)}}}"]
    if q.query.startswith("re:"):
        parts.append(f"|~ {quote(q.query[3:])}")
    elif q.query:
        parts.append(f"|= {quote(q.query)}")
    if q.level is not None and q.level != LEVELS[0]:
        words = "|".join(level_words(q.level))
        match settings.level_filter:
            case "line":
                parts.append(f"|~ `(?i)\\b({words})\\b`")
            case "label":
                parts.append(f'| {settings.level_label}=~"(?i)({words})"')
            case "json" | "logfmt":
                parts.append(f'| {settings.level_filter} | {settings.level_label}=~"(?i)({words})"')
    return " ".join(parts)


def count_query(logql: str, q: LogQuery) -> str:
    """The instant metric query that counts every line of `logql` in the window, evaluated at `until`."""
    seconds = max(1, ceil((q.until - q.since).total_seconds()))
    return f"sum(count_over_time({logql} [{seconds}s]))"


class LokiBackend:
    """Searches Loki: one `query_range` for the newest lines, one instant count when they were cut off."""

    def __init__(self, settings: LokiSettings, *, password: str | None = None, token: str | None = None) -> None:
        self._settings = settings
        self._headers = {"X-Scope-OrgID": settings.tenant_id} if settings.tenant_id else {}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._auth = httpx.BasicAuth(settings.username, password or "") if settings.username else None

    async def search(self, q: LogQuery) -> LogSearchResult:
        """Newest lines first. The total is exact: when Loki returned fewer lines than asked for, they are all
        of them; otherwise `sum(count_over_time(…[window]))` counts the rest."""
        logql = build_logql(q, self._settings)
        window = _window(q.since, q.until)
        async with self._client() as client:
            params = {"query": logql, "limit": str(q.sample), "direction": "backward", **window}
            data = await self._get(client, "query_range", params, logql)
            records = sorted(self._records(data, q), key=lambda r: r.timestamp, reverse=True)[: q.sample]
            if not records:
                return await self._nothing_found(client, q, window)
            result = LogSearchResult(total=len(records), records=records)
            if len(records) >= q.sample:
                count = {"query": count_query(logql, q), "time": window["end"]}
                try:
                    result.total = max(result.total, _vector_sum(await self._get(client, "query", count, logql)))
                except ToolFailure as exc:
                    result.total_is_lower_bound = True
                    result.notes.append(f"Loki could not count every line, so the total is a lower bound: {exc}")
            return result

    async def labels(self, since: datetime, until: datetime) -> list[str]:
        """The stream label names with entries between `since` and `until` (GET /loki/api/v1/labels)."""
        async with self._client() as client:
            return sorted(await self._get(client, "labels", _window(since, until), "") or [])

    async def label_values(self, label: str, since: datetime, until: datetime) -> list[str]:
        """The values of stream label `label` between `since` and `until` (GET /loki/api/v1/label/<name>/values)."""
        if not re.fullmatch(LABEL_NAME, label):
            raise ToolFailure(f"{label!r} is not a label name.", hint="Use letters, digits and _, e.g. service_name.")
        async with self._client() as client:
            return sorted(await self._get(client, f"label/{label}/values", _window(since, until), "") or [])

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self._settings.url.rstrip("/") + "/loki/api/v1/",
            headers=self._headers,
            auth=self._auth,
            timeout=self._settings.timeout_s,
        )

    async def _get(self, client: httpx.AsyncClient, path: str, params: Mapping[str, str], logql: str) -> Any:
        """Loki's `data`, or a ToolFailure that says what went wrong and what to try."""
        url = self._settings.url
        try:
            response = await client.get(path, params=params)
        except httpx.TimeoutException:
            raise ToolFailure(
                f"Loki did not answer within {self._settings.timeout_s:g} s.",
                hint="Narrow the window (a later since) or add a query to cut the lines scanned, then try again.",
            ) from None
        except httpx.HTTPError as exc:
            raise ToolFailure(
                f"Cannot reach Loki at {url} ({type(exc).__name__}: {exc}). Loki may be down or tools.logs.loki.url "
                "wrong.",
                hint=LOGS_DOWN_HINT,
            ) from None
        body = response.text.strip()[:300]
        if response.status_code == 400:
            raise ToolFailure(
                f"Loki rejected the query: {body}. LogQL sent: `{logql}`.",
                hint="Pass plain text as query to search for a substring, or fix the LogQL (a raw query must start "
                f'with a stream selector such as {{{self._settings.service_label}="checkout"}}).',
            )
        if response.status_code in (401, 403):
            raise ToolFailure(
                f"Loki refused the credentials (HTTP {response.status_code}: {body}). Credentials are configuration "
                "(tools.logs.loki: username, password_env, token_env, tenant_id).",
                hint=LOGS_DOWN_HINT,
            )
        if response.status_code != 200:
            raise ToolFailure(
                f"Loki failed with HTTP {response.status_code}: {body}.",
                hint="Try a shorter window or a narrower query; if it keeps failing, Loki is unhealthy: use other "
                "evidence.",
            )
        try:
            payload = load_json(response.content)
        except ValueError:
            payload = None
        if not isinstance(payload, dict) or payload.get("status") != "success":
            raise ToolFailure(f"Loki at {url} answered with something that is not a Loki API response: {body!r}.")
        return payload.get("data")

    def _records(self, data: Any, q: LogQuery) -> list[LogRecord]:
        """Every entry as a record, redacted at the source: each Loki stream is read oldest first."""
        service, records = q.service, []
        for stream in (data or {}).get("result") or []:
            redaction = RecordRedaction(q.redactor)
            labels: dict[str, str] = stream.get("stream") or {}
            own_service = labels.get(self._settings.service_label) or service
            label_level = next(
                (canonical_level(labels[k]) for k in (self._settings.level_label, "detected_level") if k in labels), ""
            )
            fields = {k: v for k, v in labels.items() if k != self._settings.service_label}
            entries = sorted(stream.get("values") or [], key=lambda entry: int(entry[0]))
            for entry in entries:
                when = datetime.fromtimestamp(int(entry[0]) / 1e9, UTC)
                records.append(
                    redaction.redact(record_from_line(when, str(entry[1]), own_service, label_level, fields))
                )
        return records

    async def _nothing_found(
        self, client: httpx.AsyncClient, q: LogQuery, window: Mapping[str, str]
    ) -> LogSearchResult:
        """An empty result with the services Loki knows, or, when none carry the label, the labels it has."""
        result = LogSearchResult(total=0, records=[])
        if q.query.startswith("{"):
            return result
        label = self._settings.service_label
        try:
            result.services = sorted(await self._get(client, f"label/{label}/values", window, "") or [])
            if not result.services:
                labels = sorted(await self._get(client, "labels", window, "") or [])
                missing = unknown_name("label", label, labels, where="is on any stream in this window")
                result.notes.append(
                    f"{missing} tools.logs.loki.service_label names it, so that setting may be wrong, and the "
                    "services cannot be listed until it is corrected."
                )
        except ToolFailure as exc:
            result.notes.append(f"Could not list the services Loki knows: {exc}")
        return result


def _vector_sum(data: Any) -> int:
    """The value of `sum(...)` in an instant vector result (no series means no lines)."""
    total = 0.0
    for sample in (data or {}).get("result") or []:
        total += float(sample.get("value", [0, "0"])[1])
    return int(total)


def _window(since: datetime, until: datetime) -> dict[str, str]:
    """Loki's `start` and `end` parameters, in nanoseconds."""
    return {"start": str(_ns(since)), "end": str(_ns(until))}


def _ns(when: datetime) -> int:
    return (when - _EPOCH) // timedelta(microseconds=1) * 1000
