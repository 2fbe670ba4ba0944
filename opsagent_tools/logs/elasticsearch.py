"""Elasticsearch or OpenSearch as a log backend: one `_search` with a bool filter, newest hits first, exact total.

Field names differ between deployments (ECS, Filebeat, custom), so every field the query touches is a setting.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, Field

from kernel import Redactor, ToolFailure
from opsagent_tools.bounded_json import load_json
from opsagent_tools.logs.records import FieldNames, parse_timestamp, record_from_document
from opsagent_tools.logs.search import (
    LEVELS,
    LOGS_DOWN_HINT,
    LogQuery,
    LogRecord,
    LogSearchResult,
    MessageGroup,
    level_words,
)
from opsagent_tools.logs.source_redaction import redact_in_order

QUERY_SYNTAX = (
    'Lucene query_string syntax over the message, words joined by AND (e.g. timeout, "connect error", '
    "upstream AND NOT retry, or field:value such as http.response.status_code:503)"
)
"""How this backend reads `query`, for the tool description."""
SERVICES_LISTED = 50


class ElasticsearchSettings(BaseModel):
    """The Elasticsearch/OpenSearch backend. Secrets are read from the environment variables named here, never stored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = "http://localhost:9200"
    index: str = "logs-*"
    """Index, alias, data stream or pattern searched (comma-separated for several)."""
    timestamp_field: str = "@timestamp"
    service_field: str = "service.name"
    """Matched exactly with a `term` query: a keyword field (for a text field use its `.keyword` sub-field)."""
    level_field: str = "log.level"
    """Matched with `terms` on the level words in lower, upper and title case."""
    message_field: str = "message"
    """The default field of `query_string`, and the message shown."""
    group_field: str | None = None
    """A keyword field (e.g. `error.type`, `message.keyword`) to count messages over all hits with a terms
    aggregation; unset: messages are grouped by shape from the newest hits."""
    username: str | None = None
    """Basic auth user (with `password_env`)."""
    password_env: str | None = None
    """Name of the environment variable holding the basic auth password."""
    api_key_env: str | None = None
    """Name of the environment variable holding an API key (the encoded form), sent as `Authorization: ApiKey …`."""
    verify_tls: bool = True
    timeout_s: float = Field(default=10.0, gt=0)
    """Seconds each HTTP request may take."""


def build_search(q: LogQuery, settings: ElasticsearchSettings) -> dict[str, Any]:
    """The `_search` body for `q`: newest first, an exact total, and only filters (no scoring)."""
    ts = settings.timestamp_field
    filters: list[dict[str, Any]] = [
        {"range": {ts: {"gte": _iso(q.since), "lte": _iso(q.until), "format": "strict_date_optional_time"}}},
        {"term": {settings.service_field: q.service}},
    ]
    if q.level is not None and q.level != LEVELS[0]:
        filters.append({"terms": {settings.level_field: level_terms(q.level)}})
    if q.query:
        if q.query.startswith("re:"):
            raise ToolFailure(
                "Elasticsearch searches words, not lines with regular expressions.",
                hint="Drop 're:' and use query_string syntax, e.g. upstream AND \"connect error\", or a regex on one "
                "word: /time.*out/.",
            )
        filters.append(
            {"query_string": {"query": q.query, "default_field": settings.message_field, "default_operator": "AND"}}
        )
    body: dict[str, Any] = {
        "size": q.sample,
        "sort": [{ts: {"order": "desc"}}],
        "track_total_hits": True,
        "query": {"bool": {"filter": filters}},
    }
    if settings.group_field:
        first_last = {"first": {"min": {"field": ts}}, "last": {"max": {"field": ts}}}
        body["aggs"] = {"messages": {"terms": {"field": settings.group_field, "size": 10}, "aggs": first_last}}
    return body


def level_terms(minimum: str) -> list[str]:
    """The level field's values at or above `minimum`, in lower, upper and title case (keyword fields match exactly)."""
    return sorted({v for w in level_words(minimum) for v in (w, w.upper(), w.title())})


class ElasticsearchBackend:
    """Searches one index pattern; on zero hits, a second request lists the services with logs in the window."""

    def __init__(
        self, settings: ElasticsearchSettings, *, password: str | None = None, api_key: str | None = None
    ) -> None:
        self._settings = settings
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"ApiKey {api_key}"
        elif settings.username:
            user_pass = f"{settings.username}:{password or ''}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(user_pass).decode()
        self._names = FieldNames(
            timestamp=(settings.timestamp_field,),
            level=(settings.level_field,),
            service=(settings.service_field,),
            message=(settings.message_field,),
        )

    async def search(self, q: LogQuery) -> LogSearchResult:
        """Newest hits first; `hits.total` is exact because the search asks for `track_total_hits`."""
        body = build_search(q, self._settings)
        async with self._client() as client:
            answer = await self._search(client, body)
            hits = answer.get("hits") or {}
            total_field = hits.get("total", 0)
            total = total_field.get("value", 0) if isinstance(total_field, dict) else int(total_field)
            lower_bound = isinstance(total_field, dict) and total_field.get("relation") == "gte"
            raw = [r for hit in hits.get("hits") or [] if (r := self._record(hit, q.service)) is not None]
            records = redact_in_order(raw, q.redactor)
            result = LogSearchResult(total=total, records=records, total_is_lower_bound=lower_bound)
            result.groups = _groups(answer.get("aggregations"), self._settings.group_field, q.redactor)
            result.notes += _partial_failures(answer)
            if total == 0:
                result.services = await self._services(client, q)
            return result

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self._settings.url.rstrip("/"),
            headers=self._headers,
            timeout=self._settings.timeout_s,
            verify=self._settings.verify_tls,
        )

    async def _search(self, client: httpx.AsyncClient, body: Mapping[str, Any]) -> dict[str, Any]:
        """The search response, or a ToolFailure with Elasticsearch's reason and what to try."""
        answer = await self._send(client, "POST", f"/{self._settings.index}/_search", json=body)
        if not isinstance(answer, dict):
            raise ToolFailure(
                f"Elasticsearch answered the search with something that is not a search response: {answer!r:.200}"
            )
        return answer

    async def indices(self, pattern: str) -> list[tuple[str, int]]:
        """(index, document count) of the open indices `pattern` names, data streams' backing indices included
        (GET /_cat/indices/<pattern>?format=json)."""
        params = {"format": "json", "h": "index,docs.count", "s": "index"}
        async with self._client() as client:
            rows = await self._send(client, "GET", f"/_cat/indices/{quote(pattern, safe='*,')}", params=params)
        if not isinstance(rows, list):
            raise ToolFailure(f"Elasticsearch listed indices in an unexpected shape: {rows!r:.200}")
        return [
            (str(row["index"]), _count(row.get("docs.count")))
            for row in rows
            if isinstance(row, dict) and "index" in row
        ]

    async def field_types(self, pattern: str) -> tuple[int, dict[str, list[str]]]:
        """How many indices `pattern` names, and each field's types there (GET /<pattern>/_field_caps?fields=*)."""
        async with self._client() as client:
            answer = await self._send(
                client, "GET", f"/{quote(pattern, safe='*,')}/_field_caps", params={"fields": "*"}
            )
        if not isinstance(answer, dict):
            raise ToolFailure(f"Elasticsearch listed fields in an unexpected shape: {answer!r:.200}")
        fields = answer.get("fields") or {}
        types = {
            str(name): sorted(str(kind) for kind in caps) for name, caps in fields.items() if isinstance(caps, dict)
        }
        return len(answer.get("indices") or []), types

    async def _send(
        self,
        client: httpx.AsyncClient,
        method: str,
        path: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> Any:
        """Elasticsearch's JSON answer, or a ToolFailure with its reason and what to try."""
        where = (
            f"{self._settings.url} index {self._settings.index}"
            if path.endswith("/_search")
            else self._settings.url + path
        )
        try:
            response = await client.request(method, path, json=json, params=params)
        except httpx.TimeoutException:
            raise ToolFailure(
                f"Elasticsearch did not answer within {self._settings.timeout_s:g} s.",
                hint="Narrow the window (a later since) or the query, then try again.",
            ) from None
        except httpx.HTTPError as exc:
            raise ToolFailure(
                f"Cannot reach Elasticsearch at {self._settings.url} ({type(exc).__name__}: {exc}). It may be down or "
                "tools.logs.elasticsearch.url wrong.",
                hint=LOGS_DOWN_HINT,
            ) from None
        try:
            answer = load_json(response.content)
        except ValueError:
            answer = None
        if response.status_code == 200 and isinstance(answer, dict | list):
            return answer
        reason = _reason(answer) or response.text.strip()[:300]
        status = response.status_code
        if status == 400 and json is not None:
            raise ToolFailure(
                f"Elasticsearch rejected the search: {reason}.",
                hint="Check the query's syntax (quote phrases; escape "
                '+ - = && || > < ! ( ) { } [ ] ^ " ~ * ? : \\ / with a backslash) or drop it.',
            )
        if status == 404:
            raise ToolFailure(
                f"Elasticsearch has no such index ({reason}; searched {where}). tools.logs.elasticsearch.index may be "
                "wrong.",
                hint="Tell the user.",
            )
        if status in (401, 403):
            raise ToolFailure(
                f"Elasticsearch refused the credentials (HTTP {status}: {reason}). Credentials are configuration "
                "(tools.logs.elasticsearch: username, password_env, api_key_env).",
                hint=LOGS_DOWN_HINT,
            )
        raise ToolFailure(
            f"Elasticsearch failed with HTTP {status}: {reason}.",
            hint="Try a shorter window or a narrower query; if it keeps failing, the cluster is unhealthy: use other "
            "evidence.",
        )

    def _record(self, hit: Mapping[str, Any], service: str) -> LogRecord | None:
        source = hit.get("_source") or {}
        sort = hit.get("sort") or [None]
        fallback = parse_timestamp(sort[0]) if isinstance(sort[0], int | float) else None
        return record_from_document(source, names=self._names, service=service, timestamp=fallback)

    async def _services(self, client: httpx.AsyncClient, q: LogQuery) -> list[str]:
        """Services with any log in the window (a terms aggregation); [] when that cannot be answered."""
        window = build_search(q, self._settings)["query"]["bool"]["filter"][0]
        body = {
            "size": 0,
            "query": {"bool": {"filter": [window]}},
            "aggs": {"services": {"terms": {"field": self._settings.service_field, "size": SERVICES_LISTED}}},
        }
        try:
            answer = await self._search(client, body)
        except ToolFailure:
            return []
        buckets = ((answer.get("aggregations") or {}).get("services") or {}).get("buckets") or []
        return [str(bucket["key"]) for bucket in buckets if "key" in bucket]


def _groups(aggregations: Any, group_field: str | None, redactor: Redactor) -> list[MessageGroup] | None:
    """The messages aggregation's buckets as groups, each message redacted (a bucket key is raw field text)."""
    if not group_field or not isinstance(aggregations, dict):
        return None
    buckets = (aggregations.get("messages") or {}).get("buckets") or []
    groups = [
        MessageGroup(
            text=redactor.redact(str(bucket.get("key"))),
            count=int(bucket.get("doc_count", 0)),
            first=parse_timestamp((bucket.get("first") or {}).get("value")),
            last=parse_timestamp((bucket.get("last") or {}).get("value")),
        )
        for bucket in buckets
    ]
    return groups or None


def _partial_failures(answer: Mapping[str, Any]) -> list[str]:
    notes = []
    shards = answer.get("_shards") or {}
    if shards.get("failed"):
        failure = (shards.get("failures") or [{}])[0]
        why = (failure.get("reason") or {}).get("reason", "no reason given")
        notes.append(f"{shards['failed']} of {shards.get('total', '?')} shards failed ({why}): counts may be low.")
    if answer.get("timed_out"):
        notes.append("Elasticsearch timed out while searching: the results may be incomplete.")
    return notes


def _reason(answer: Any) -> str:
    """The most specific reason in an error body: the root cause, then what caused it."""
    if not isinstance(answer, dict) or not isinstance(answer.get("error"), dict):
        return ""
    error = answer["error"]
    cause = (error.get("root_cause") or [error])[0]
    text = f"{cause.get('type', 'error')}: {cause.get('reason', '')}".strip()
    shard = ((error.get("failed_shards") or [{}])[0].get("reason")) or {}
    deeper = (error.get("caused_by") or shard.get("caused_by") or {}).get("reason")
    if deeper and deeper not in text:
        text += f" (caused by: {deeper})"
    return text[:400]


def _count(value: Any) -> int:
    """A `_cat` count, which comes as a string (or null for a closed index)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
