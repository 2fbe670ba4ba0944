"""An async client for the Prometheus HTTP API, also served by Thanos, Mimir, Cortex and VictoriaMetrics.

Only the documented /api/v1 endpoints are used, and every failure becomes a `ToolFailure` saying what to change.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import httpx

from kernel import ToolFailure
from opsagent_tools.bounded_json import load_json
from opsagent_tools.metrics.series import Series

LONG_QUERY_CHARS = 2000
"""PromQL longer than this goes in a POST form: proxies in front of Prometheus often cap URL length."""
URL_SETTING = "tools.metrics.url"
"""The configuration key named in "cannot reach Prometheus" errors."""
NARROWER = "Narrow the window or raise the step."
"""The model's hint when Prometheus ran out of time or patience on a query."""
HEADERS_SETTING = "tools.metrics.headers"
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class PrometheusClient:
    """Queries a Prometheus-compatible server; results come back as `Series` with float values (NaN, ±Inf kept).

    Pass `client` to share an `httpx.AsyncClient` (its lifetime is yours); without one, each request opens and
    closes its own connection, so the client is safe to use from any event loop. Naive datetimes are taken as UTC.
    """

    def __init__(
        self,
        *,
        base_url: str,
        timeout: float = 10.0,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._headers = dict(headers or {})
        self._client = client

    async def query_range(self, promql: str, start: datetime, end: datetime, step_s: float) -> list[Series]:
        """Evaluate `promql` from `start` to `end` every `step_s` seconds (GET /api/v1/query_range)."""
        params = {"query": promql, "start": _unix(start), "end": _unix(end), "step": f"{step_s:g}"}
        data = await self._api("/api/v1/query_range", params, promql=promql)
        return _parse_result(data, promql)

    async def query(self, promql: str, at: datetime | None = None) -> list[Series]:
        """Evaluate `promql` at one instant, by default the server's now (GET /api/v1/query)."""
        params = {"query": promql}
        if at is not None:
            params["time"] = _unix(at)
        data = await self._api("/api/v1/query", params, promql=promql)
        return _parse_result(data, promql)

    async def label_values(
        self,
        label: str,
        match: str | Sequence[str] | None = None,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> list[str]:
        """The values of `label`, optionally only on series matching a selector such as '{service="x"}'
        (several selectors are OR-ed), optionally only between `start` and `end`."""
        if not _LABEL_NAME.fullmatch(label):
            raise ToolFailure(f'"{label}" is not a label name.', hint="Use letters, digits and _, e.g. service.")
        params: dict[str, Any] = _window(start, end)
        if match:
            params["match[]"] = [match] if isinstance(match, str) else list(match)
        data = await self._api(f"/api/v1/label/{label}/values", params, promql=None)
        if not isinstance(data, list):
            raise ToolFailure(f"Prometheus sent label values that are not a list: {str(data)[:200]}")
        return sorted(str(value) for value in data)

    async def label_names(self, *, start: datetime | None = None, end: datetime | None = None) -> list[str]:
        """Every label name on series with samples between `start` and `end` (GET /api/v1/labels)."""
        data = await self._api("/api/v1/labels", _window(start, end), promql=None)
        if not isinstance(data, list):
            raise ToolFailure(f"Prometheus sent label names that are not a list: {str(data)[:200]}")
        return sorted(str(name) for name in data)

    async def series(
        self, match: str, *, start: datetime | None = None, end: datetime | None = None, limit: int = 0
    ) -> list[dict[str, str]]:
        """The label sets of the series `match` selects between `start` and `end` (GET /api/v1/series), at most
        `limit` of them (0: all; servers without the `limit` parameter ignore it, so the list is cut here too)."""
        params: dict[str, Any] = {"match[]": [match], **_window(start, end)}
        if limit:
            params["limit"] = str(limit)
        data = await self._api("/api/v1/series", params, promql=match)
        if not isinstance(data, list):
            raise ToolFailure(f"Prometheus sent series that are not a list: {str(data)[:200]}")
        found = [{str(k): str(v) for k, v in item.items()} for item in data if isinstance(item, dict)]
        return found[:limit] if limit else found

    async def _api(self, path: str, params: Mapping[str, Any], *, promql: str | None) -> Any:
        """Call one endpoint and return its `data`, or raise a `ToolFailure` the model can act on."""
        url = self.base_url + path
        use_post = promql is not None and len(promql) > LONG_QUERY_CHARS
        try:
            if self._client is not None:
                response = await self._send(self._client, url, params, use_post)
            else:
                async with httpx.AsyncClient() as client:
                    response = await self._send(client, url, params, use_post)
        except httpx.TimeoutException as exc:
            raise ToolFailure(f"Prometheus did not answer within {self.timeout:g} s.", hint=NARROWER) from exc
        except httpx.ConnectError as exc:
            reason = str(exc) or type(exc).__name__
            raise ToolFailure(
                f"cannot reach Prometheus at {self.base_url} ({reason}): check {URL_SETTING} and that the server is up"
            ) from exc
        except httpx.HTTPError as exc:
            raise ToolFailure(
                f"the request to Prometheus at {self.base_url} failed ({type(exc).__name__}: {exc}).", hint="Try again."
            ) from exc
        return _data_or_failure(response, url, promql)

    async def _send(
        self, client: httpx.AsyncClient, url: str, params: Mapping[str, Any], use_post: bool
    ) -> httpx.Response:
        timeout = httpx.Timeout(self.timeout)
        if use_post:
            return await client.post(url, data=dict(params), headers=self._headers, timeout=timeout)
        return await client.get(url, params=dict(params), headers=self._headers, timeout=timeout)


def _window(start: datetime | None, end: datetime | None) -> dict[str, Any]:
    """The `start` and `end` parameters that are given."""
    return {name: _unix(moment) for name, moment in (("start", start), ("end", end)) if moment is not None}


def _unix(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return f"{moment.timestamp():.3f}"


def _data_or_failure(response: httpx.Response, url: str, promql: str | None) -> Any:
    """The envelope's `data` on success; otherwise a failure worded by what went wrong."""
    try:
        body = load_json(response.content)
    except ValueError:
        body = None
    if not isinstance(body, dict) or "status" not in body:
        raise _non_api_failure(response, url)
    if body["status"] == "success":
        return body.get("data")
    kind, error = str(body.get("errorType", "")), str(body.get("error", "(no message)"))
    query = f": {promql}" if promql else ""
    if kind == "bad_data":
        if promql:
            raise ToolFailure(f"Prometheus rejected the query: {error}{query}.", hint="Fix the PromQL.")
        raise ToolFailure(f"Prometheus rejected the request to {url}: {error}")
    if kind == "execution":
        raise ToolFailure(
            f"Prometheus could not evaluate the query: {error}{query}.",
            hint="Change the PromQL, or select fewer series.",
        )
    if kind in ("timeout", "canceled"):
        raise ToolFailure(f"Prometheus gave up on the query ({error}).", hint=NARROWER)
    raise ToolFailure(f"Prometheus answered HTTP {response.status_code} with an error ({kind}: {error}){query}")


def _non_api_failure(response: httpx.Response, url: str) -> ToolFailure:
    """An answer that is not Prometheus's API: what to check, for the operator, and when to retry, for the model."""
    status = response.status_code
    if status in (401, 403):
        return ToolFailure(
            f"Prometheus refused the request (HTTP {status}): check the credentials in {HEADERS_SETTING}"
        )
    if status == 404:
        return ToolFailure(
            f"no Prometheus API at {url} (HTTP 404): check {URL_SETTING} "
            "(Mimir and Cortex serve the API under a /prometheus prefix)"
        )
    if status == 429:
        return ToolFailure(
            "Prometheus is rate-limiting requests (HTTP 429).", hint="Wait a little, or ask for fewer series."
        )
    snippet = " ".join(response.text.split())[:200] or "(empty body)"
    if status >= 500:
        return ToolFailure(
            f"Prometheus answered HTTP {status} without an API response ({snippet}): the server or a proxy in "
            "front of it is failing.",
            hint="Try again shortly.",
        )
    return ToolFailure(
        f"the answer from {url} is not a Prometheus API response (HTTP {status}: {snippet}): check {URL_SETTING}"
    )


def _parse_result(data: Any, promql: str) -> list[Series]:
    """Matrix, vector and scalar results as series; a string result is not a number to show."""
    if not isinstance(data, dict) or "resultType" not in data:
        raise ToolFailure(f"Prometheus sent a result of unexpected shape for: {promql}")
    kind, result = data["resultType"], data.get("result")
    if kind == "matrix":
        return [Series(_labels(item), _points(item.get("values") or [])) for item in result or []]
    if kind == "vector":
        return [Series(_labels(item), _points([item.get("value")])) for item in result or []]
    if kind == "scalar":
        return [Series({}, _points([result]))]
    raise ToolFailure(f"the query returns a {kind}, not numbers: {promql}")


def _labels(item: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (item.get("metric") or {}).items()}


def _points(pairs: Sequence[Any]) -> list[tuple[float, float]]:
    """[[1712345678.123, "0.5"], …] → [(1712345678.123, 0.5), …]; "NaN" and "±Inf" values are kept, malformed
    pairs (a native histogram sample, say) are skipped."""
    points = []
    for pair in pairs:
        try:
            ts, value = float(pair[0]), float(pair[1])
        except (TypeError, ValueError, IndexError, KeyError):
            continue
        if math.isfinite(ts):
            points.append((ts, value))
    return points
