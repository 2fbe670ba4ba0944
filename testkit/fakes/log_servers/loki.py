"""A fake Loki: `query_range`, the instant `count_over_time`, labels and label values, over in-memory entries
filtered by a simplified LogQL."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from opsagent_tools.logs.records import parse_timestamp
from testkit.fakes.log_servers.server import BadRequest, LogServer


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


class FakeLoki(LogServer):
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
