"""A fake Elasticsearch: `_search` (bool filters, sort, size, totals, terms aggregations, a small Lucene
`query_string`), `_cat/indices` and `_field_caps`, over in-memory documents, with Elasticsearch's error bodies."""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from aiohttp import web

from opsagent_tools.logs.records import lookup, parse_timestamp
from testkit.fakes.log_servers.server import BadRequest, LogServer


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


class FakeElasticsearch(LogServer):
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
