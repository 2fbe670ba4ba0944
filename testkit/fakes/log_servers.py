"""Fake Loki and Elasticsearch servers on 127.0.0.1 that speak the documented response shapes and filter by the request.

Each server parses the time range, limit and a simplified query language, keeps every request for assertions,
and fails on demand (an error status and body, or a hang that ends when the server closes).
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import re
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from opsagent_tools.logs.records import lookup, parse_timestamp
from testkit.servers.local_server import LocalServer


@dataclass(frozen=True)
class Failure:
    """What the next request gets instead of an answer: a status and body, after `delay` seconds."""

    status: int = 500
    body: Any = "internal error"
    delay: float = 0.0
    path: str = ""
    """Only a request whose path ends with this gets the failure ("" for any)."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


class _Server(LocalServer):
    """An aiohttp server on a free port; `fail(...)` queues failures, `requests` records calls."""

    shutdown_timeout = 0.5

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Request] = []
        self.failures: deque[Failure] = deque()

    def fail(self, *failures: Failure) -> None:
        self.failures.extend(failures)

    def hang(self, seconds: float = 30.0) -> None:
        """The next request is answered only after `seconds` (or when the server closes)."""
        self.failures.append(Failure(status=0, delay=seconds))

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._handle)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = json.loads(raw) if raw else None
        headers = {name.lower(): value for name, value in request.headers.items()}
        self.requests.append(Request(request.method, request.path, dict(request.query), headers, body))
        failure = next((f for f in self.failures if request.path.endswith(f.path)), None)
        if failure is not None:
            self.failures.remove(failure)
            if failure.delay:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), failure.delay)
            if failure.status:
                if isinstance(failure.body, str):
                    return web.Response(text=failure.body, status=failure.status)
                return web.json_response(failure.body, status=failure.status)
        try:
            return await self.answer(request.path, dict(request.query), headers, body)
        except BadRequest as exc:
            return exc.response

    async def answer(self, path: str, query: dict[str, str], headers: dict[str, str], body: Any) -> web.StreamResponse:
        raise NotImplementedError


class BadRequest(Exception):
    def __init__(self, response: web.StreamResponse) -> None:
        self.response = response


# --- Loki --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LokiEntry:
    ts: datetime
    labels: dict[str, str]
    line: str


_STRING = r'"(?:[^"\\]|\\.)*"|`[^`]*`'
_MATCHER = re.compile(rf"\s*(?P<name>[A-Za-z_]\w*)\s*(?P<op>=~|!~|!=|=)\s*(?P<value>{_STRING})\s*(?:,|$)")
_STAGE = re.compile(
    rf"\s*(?:(?P<line_op>\|=|!=|\|~|!~)\s*(?P<line_value>{_STRING})"
    rf"|\|\s*(?P<parser>json|logfmt)\b"
    rf"|\|\s*(?P<label>[A-Za-z_]\w*)\s*(?P<label_op>=~|!~|!=|=)\s*(?P<label_value>{_STRING}))"
)
_COUNT = re.compile(r"sum\(count_over_time\((?P<inner>.*) \[(?P<seconds>\d+)s\]\)\)")


def _unquote(token: str) -> str:
    return token[1:-1] if token.startswith("`") else json.loads(token)


def _compare(op: str, actual: str, expected: str) -> bool:
    match op:
        case "=":
            return actual == expected
        case "!=":
            return actual != expected
        case "=~":
            return re.fullmatch(expected, actual) is not None
        case _:
            return re.fullmatch(expected, actual) is None


class LogQL:
    """A simplified LogQL log query: a selector, line filters, `| json`/`| logfmt` and label filters."""

    def __init__(self, text: str) -> None:
        selector = re.match(r"\s*\{(?P<inside>[^}]*)\}", text)
        if selector is None:
            raise ValueError(
                f"parse error at line 1, col 1: syntax error: unexpected IDENTIFIER, expecting {{ in {text}"
            )
        self.matchers = [m.group("name", "op", "value") for m in _MATCHER.finditer(selector.group("inside"))]
        self.stages: list[re.Match[str]] = []
        position = selector.end()
        while position < len(text.rstrip()):
            stage = _STAGE.match(text, position)
            if stage is None:
                raise ValueError(
                    f"parse error at line 1, col {position + 1}: syntax error: unexpected {text[position:]!r}"
                )
            self.stages.append(stage)
            position = stage.end()

    def matches(self, entry: LokiEntry) -> bool:
        labels = dict(entry.labels)
        if not all(_compare(op, labels.get(n, ""), _unquote(v)) for n, op, v in self.matchers):
            return False
        for stage in self.stages:
            if stage["line_op"]:
                needle, op = _unquote(stage["line_value"]), stage["line_op"]
                found = needle in entry.line if op in ("|=", "!=") else re.search(needle, entry.line) is not None
                if found != (op in ("|=", "|~")):
                    return False
            elif stage["parser"] == "json":
                try:
                    labels.update({k.replace(".", "_"): str(v) for k, v in json.loads(entry.line).items()})
                except ValueError:
                    labels["__error__"] = "JSONParserErr"
            elif stage["parser"] == "logfmt":
                labels.update(dict(re.findall(r'(\w+)="?([^"\s]*)"?', entry.line)))
            elif not _compare(stage["label_op"], labels.get(stage["label"], ""), _unquote(stage["label_value"])):
                return False
        return True


def loki_time(text: str) -> datetime:
    return datetime.fromtimestamp(int(text) / 1e9, UTC) if text.isdigit() else parse_timestamp(text)  # type: ignore[return-value]


class FakeLoki(_Server):
    """Loki's query_range, instant count_over_time, labels and label values endpoints over in-memory entries."""

    def __init__(self, entries: list[LokiEntry]) -> None:
        super().__init__()
        self.entries = entries

    def logql(self) -> list[str]:
        """The `query` parameter of every request, in order."""
        return [r.query.get("query", "") for r in self.requests]

    async def answer(self, path: str, query: dict[str, str], headers: dict[str, str], body: Any) -> web.StreamResponse:
        if path == "/loki/api/v1/query_range":
            return self._query_range(query)
        if path == "/loki/api/v1/query":
            return self._count(query)
        if path == "/loki/api/v1/labels":
            in_window = self._window(query)
            return _success(sorted({name for e in in_window for name in e.labels}))
        if label := re.fullmatch(r"/loki/api/v1/label/(\w+)/values", path):
            values = {e.labels[label[1]] for e in self._window(query) if label[1] in e.labels}
            return _success(sorted(values))
        return web.Response(status=404, text="404 page not found")

    def _window(self, query: dict[str, str]) -> list[LokiEntry]:
        start, end = loki_time(query["start"]), loki_time(query["end"])
        return [e for e in self.entries if start <= e.ts <= end]

    def _parse(self, text: str) -> LogQL:
        try:
            return LogQL(text)
        except ValueError as exc:
            raise BadRequest(web.Response(status=400, text=str(exc))) from None

    def _query_range(self, query: dict[str, str]) -> web.StreamResponse:
        logql = self._parse(query["query"])
        found = sorted((e for e in self._window(query) if logql.matches(e)), key=lambda e: e.ts, reverse=True)
        if query.get("direction", "backward") != "backward":
            found.reverse()
        found = found[: int(query.get("limit", "100"))]
        streams: dict[str, dict[str, Any]] = {}
        for entry in found:
            stream = streams.setdefault(
                json.dumps(entry.labels, sort_keys=True), {"stream": entry.labels, "values": []}
            )
            stream["values"].append([str(int(entry.ts.timestamp() * 1e9)), entry.line])
        return _success({"resultType": "streams", "result": list(streams.values()), "stats": {}})

    def _count(self, query: dict[str, str]) -> web.StreamResponse:
        count = _COUNT.fullmatch(query["query"])
        if count is None:
            raise BadRequest(
                web.Response(status=400, text="fake loki: only sum(count_over_time(... [Ns])) is supported")
            )
        logql, seconds = self._parse(count["inner"]), int(count["seconds"])
        at = loki_time(query["time"])
        n = sum(1 for e in self.entries if 0 <= (at - e.ts).total_seconds() < seconds and logql.matches(e))
        result = [{"metric": {}, "value": [at.timestamp(), str(n)]}] if n else []
        return _success({"resultType": "vector", "result": result, "stats": {}})


def _success(data: Any) -> web.Response:
    return web.json_response({"status": "success", "data": data})


# --- Elasticsearch -----------------------------------------------------------------------------


def es_error(status: int, error_type: str, reason: str, **extra: Any) -> dict[str, Any]:
    """An Elasticsearch error body: the root cause list, the error, and the status."""
    return {
        "error": {
            "root_cause": [{"type": error_type, "reason": reason}],
            "type": error_type,
            "reason": reason,
            **extra,
        },
        "status": status,
    }


def es_parse_error(query: str, detail: str) -> dict[str, Any]:
    """What Elasticsearch answers when query_string cannot parse a query."""
    cause = {"type": "query_shard_exception", "reason": f"Failed to parse query [{query}]"}
    body = es_error(400, "search_phase_execution_exception", "all shards failed", phase="query")
    body["error"]["root_cause"] = [cause]
    body["error"]["failed_shards"] = [
        {
            "shard": 0,
            "index": "logs-app",
            "reason": {**cause, "caused_by": {"type": "parse_exception", "reason": detail}},
        }
    ]
    return body


class FakeElasticsearch(_Server):
    """`POST /<index>/_search` over in-memory documents: bool filter, sort, size, total and terms aggregations;
    `GET /_cat/indices/<pattern>?format=json` and `GET /<pattern>/_field_caps?fields=*` over the index and the
    empty `others` (name → document count), with the documented shapes (string counts, types per field)."""

    def __init__(
        self,
        docs: list[dict[str, Any]],
        *,
        index: str = "logs-app",
        api_key: str | None = None,
        others: dict[str, int] | None = None,
    ) -> None:
        super().__init__()
        self.docs, self.index, self.api_key = docs, index, api_key
        self.others = others or {}

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    async def answer(self, path: str, query: dict[str, str], headers: dict[str, str], body: Any) -> web.StreamResponse:
        if self.api_key is not None and headers.get("authorization") != f"ApiKey {self.api_key}":
            reason = f"missing authentication credentials for REST request [{path}]"
            return web.json_response(es_error(401, "security_exception", reason), status=401)
        if cat := re.fullmatch(r"/_cat/indices(?:/([^/]+))?", path):
            return self._cat_indices(cat[1] or "*", query)
        if caps := re.fullmatch(r"/([^/]+)/_field_caps", path):
            return self._field_caps(caps[1], query)
        match = re.fullmatch(r"/([^/]+)/_search", path)
        if match is None:
            return web.json_response(es_error(400, "illegal_argument_exception", f"no handler for {path}"), status=400)
        patterns = match[1].split(",")
        if not any(fnmatch.fnmatch(self.index, p) for p in patterns):
            if any("*" in p for p in patterns):
                return web.json_response(_hits([], 0, body))
            reason = f"no such index [{match[1]}]"
            return web.json_response(es_error(404, "index_not_found_exception", reason, index=match[1]), status=404)
        found = [d for d in self.docs if _matches(body.get("query", {"match_all": {}}), d)]
        for sort in reversed(body.get("sort", [])):
            ((name, spec),) = sort.items()
            found.sort(key=lambda d, n=name: str(lookup(d, n)), reverse=spec.get("order") == "desc")
        response = _hits(found[: body.get("size", 10)], len(found), body)
        if "aggs" in body:
            response["aggregations"] = {name: _terms(spec, found) for name, spec in body["aggs"].items()}
        return web.json_response(response)

    def _named(self, target: str) -> dict[str, int] | web.Response:
        """The indices (name → document count) a comma-separated target names; a 404 for a missing concrete one."""
        counts = {self.index: len(self.docs), **self.others}
        named = {n: c for n, c in counts.items() if any(fnmatch.fnmatch(n, p) for p in target.split(","))}
        missing = [p for p in target.split(",") if "*" not in p and p not in counts]
        if missing:
            reason = f"no such index [{missing[0]}]"
            return web.json_response(es_error(404, "index_not_found_exception", reason, index=missing[0]), status=404)
        return named

    def _cat_indices(self, target: str, query: dict[str, str]) -> web.StreamResponse:
        named = self._named(target)
        if isinstance(named, web.Response):
            return named
        if query.get("format") != "json":
            return web.Response(text="".join(f"green open {n} {c}\n" for n, c in named.items()))
        columns = query.get("h", "health,status,index,uuid,pri,rep,docs.count").split(",")
        rows = [
            {
                "health": "green",
                "status": "open",
                "index": n,
                "uuid": f"u{i}",
                "pri": "1",
                "rep": "0",
                "docs.count": str(c),
            }
            for i, (n, c) in enumerate(sorted(named.items()))
        ]
        return web.json_response([{k: row[k] for k in columns if k in row} for row in rows])

    def _field_caps(self, target: str, query: dict[str, str]) -> web.StreamResponse:
        named = self._named(target)
        if isinstance(named, web.Response):
            return named
        if "fields" not in query:
            error = es_error(
                400,
                "action_request_validation_exception",
                "Validation Failed: 1: specified fields can't be null or empty;",
            )
            return web.json_response(error, status=400)
        types: dict[str, set[str]] = {"_id": {"_id"}, "_index": {"_index"}}
        if self.index in named:
            for doc in self.docs:
                for name, kind in _dynamic_mapping(doc):
                    types.setdefault(name, set()).add(kind)
        fields = {
            name: {
                kind: {
                    "type": kind,
                    "metadata_field": name.startswith("_"),
                    "searchable": True,
                    "aggregatable": kind != "text",
                }
                for kind in kinds
            }
            for name, kinds in types.items()
        }
        return web.json_response({"indices": sorted(named), "fields": fields})


def _dynamic_mapping(doc: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """The fields Elasticsearch's dynamic mapping gives a document: strings as text with a .keyword
    sub-field (dates as date), whole numbers as long, others as float, booleans as boolean, objects flattened."""
    found: list[tuple[str, str]] = []
    for key, value in doc.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            found += _dynamic_mapping(value, f"{name}.")
        elif isinstance(value, bool):
            found.append((name, "boolean"))
        elif isinstance(value, int):
            found.append((name, "long"))
        elif isinstance(value, float):
            found.append((name, "float"))
        elif isinstance(value, str) and parse_timestamp(value) is not None and value[:4].isdigit():
            found.append((name, "date"))
        elif isinstance(value, str):
            found += [(name, "text"), (f"{name}.keyword", "keyword")]
    return found


def _hits(docs: list[dict[str, Any]], total: int, body: dict[str, Any]) -> dict[str, Any]:
    tracked = body.get("track_total_hits") is True or total <= 10_000
    hits = [{"_index": "logs-app", "_id": str(i), "_score": None, "_source": d} for i, d in enumerate(docs)]
    return {
        "took": 2,
        "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {
            "total": {"value": total if tracked else 10_000, "relation": "eq" if tracked else "gte"},
            "max_score": None,
            "hits": hits,
        },
    }


def _terms(spec: dict[str, Any], docs: list[dict[str, Any]]) -> dict[str, Any]:
    field_name, size = spec["terms"]["field"], spec["terms"].get("size", 10)
    buckets: dict[str, list[dict[str, Any]]] = {}
    for doc in docs:
        value = lookup(doc, field_name.removesuffix(".keyword"))
        if value is not None:
            buckets.setdefault(str(value), []).append(doc)
    ordered = sorted(buckets.items(), key=lambda kv: -len(kv[1]))
    out = []
    for key, members in ordered[:size]:
        bucket: dict[str, Any] = {"key": key, "doc_count": len(members)}
        for name, sub in spec.get("aggs", {}).items():
            ((kind, args),) = sub.items()
            times = [parse_timestamp(lookup(d, args["field"])) for d in members]
            chosen = min(times) if kind == "min" else max(times)  # type: ignore[type-var]
            bucket[name] = {"value": chosen.timestamp() * 1000, "value_as_string": chosen.isoformat()}  # type: ignore[union-attr]
        out.append(bucket)
    other = sum(len(m) for _, m in ordered[size:])
    return {"doc_count_error_upper_bound": 0, "sum_other_doc_count": other, "buckets": out}


def _matches(clause: dict[str, Any], doc: dict[str, Any]) -> bool:
    ((kind, spec),) = clause.items()
    match kind:
        case "match_all":
            return True
        case "bool":
            return all(_matches(c, doc) for c in spec.get("filter", []) + spec.get("must", []))
        case "range":
            ((name, bounds),) = spec.items()
            when = parse_timestamp(lookup(doc, name))
            if when is None:
                return False
            low, high = parse_timestamp(bounds.get("gte")), parse_timestamp(bounds.get("lte"))
            return (low is None or when >= low) and (high is None or when <= high)
        case "term":
            ((name, value),) = spec.items()
            return lookup(doc, name) == (value["value"] if isinstance(value, dict) else value)
        case "terms":
            ((name, values),) = spec.items()
            return lookup(doc, name) in values
        case "query_string":
            return _query_string(spec, doc)
    raise BadRequest(web.json_response(es_error(400, "parsing_exception", f"unknown query [{kind}]"), status=400))


def _query_string(spec: dict[str, Any], doc: dict[str, Any]) -> bool:
    """A small Lucene subset: words and "phrases" (AND by default), NOT, field:value; unbalanced ( or " is an error."""
    text = spec["query"]
    if text.count('"') % 2 or text.count("(") != text.count(")"):
        detail = f"Cannot parse '{text}': Encountered \"<EOF>\" at line 1, column {len(text)}."
        raise BadRequest(web.json_response(es_parse_error(text, detail), status=400))
    default = str(lookup(doc, spec.get("default_field", "message")) or "").lower()
    negate, results = False, []
    for token in re.findall(r'"[^"]*"|\S+', text):
        if token in ("AND", "OR"):
            continue
        if token == "NOT":
            negate = True
            continue
        name, _, value = token.partition(":") if ":" in token and not token.startswith('"') else ("", "", token)
        haystack = str(lookup(doc, name) or "").lower() if name else default
        found = value.strip('"').lower() in haystack
        results.append(found != negate)
        negate = False
    return all(results) if spec.get("default_operator", "OR") == "AND" else any(results)


# --- running the tool as the agent does --------------------------------------------------------

NOW = datetime(2026, 11, 30, 3, 38, 57, tzinfo=UTC)
"""The fixed clock of every log test."""
