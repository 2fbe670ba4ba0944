"""The `search_logs` tool, one over whichever log backend is configured, and how that backend is built.

Its description tells the model the backend's query syntax and the usual traps, so that the first search is a useful one.
"""

# No `from __future__ import annotations`: the tool's parameter types are built per backend at run time,
# and the kernel reads them with get_type_hints, which cannot see this module's local variables.

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from kernel import CallContext, SourceLink, Tool, ToolFailure, ToolOutput, tool_from_function
from opsagent_tools.links import LinkSettings
from opsagent_tools.logs.elasticsearch import QUERY_SYNTAX as ES_QUERY_SYNTAX
from opsagent_tools.logs.elasticsearch import ElasticsearchBackend
from opsagent_tools.logs.files import QUERY_SYNTAX as FILES_QUERY_SYNTAX
from opsagent_tools.logs.files import FileLogBackend
from opsagent_tools.logs.headline import log_headline
from opsagent_tools.logs.links import LABEL, kibana_discover, loki_explore
from opsagent_tools.logs.loki import LEVEL_FILTER_NOTES, LokiBackend
from opsagent_tools.logs.loki import QUERY_SYNTAX as LOKI_QUERY_SYNTAX
from opsagent_tools.logs.search import (
    LogBackend,
    LogQuery,
    canonical_level,
    format_result,
)
from opsagent_tools.logs.settings import LogsSettings
from opsagent_tools.time_words import describe_time, parse_time, utc_now

LevelArg = Literal["error", "warn", "warning", "info", "debug", "trace", "fatal", "any", "all"]
MAX_LIMIT = 200


def build_backend(settings: LogsSettings, environ: Mapping[str, str] = os.environ) -> LogBackend:
    """The configured backend, with its secrets read from the environment now (a missing one fails at start-up)."""
    match settings.backend:
        case "files":
            assert settings.files is not None  # the validator guarantees it
            return FileLogBackend(settings.files)
        case "loki":
            loki = settings.loki
            return LokiBackend(
                loki,
                password=_secret(loki.password_env, "tools.logs.loki.password_env", environ),
                token=_secret(loki.token_env, "tools.logs.loki.token_env", environ),
            )
        case "elasticsearch":
            es = settings.elasticsearch
            return ElasticsearchBackend(
                es,
                password=_secret(es.password_env, "tools.logs.elasticsearch.password_env", environ),
                api_key=_secret(es.api_key_env, "tools.logs.elasticsearch.api_key_env", environ),
            )


def log_tools(
    settings: LogsSettings,
    *,
    backend: LogBackend | None = None,
    now: Callable[[], datetime] = utc_now,
    links: LinkSettings | None = None,
) -> list[Tool]:
    """The log tools for these settings: `search_logs`. Pass `backend` to use one built elsewhere (tests, plugins);
    `links` says where people see a search (Grafana for Loki, Kibana for Elasticsearch; none by default)."""
    store = backend if backend is not None else build_backend(settings)
    shown = links or LinkSettings()
    syntax, caveat = _query_help(settings)
    sample = settings.sample_size

    async def search_logs(
        service: Annotated[
            str, Field(min_length=1, description="The service whose logs to search, e.g. order-service.")
        ],
        since: Annotated[
            str, Field(description="Start of the window: '15m' (15 minutes ago), 't-2h', '1d', or ISO-8601.")
        ] = "15m",
        until: Annotated[str, Field(description="End of the window: 'now', a relative time, or ISO-8601.")] = "now",
        level: Annotated[
            LevelArg,
            Field(description="Minimum severity: 'error' also shows fatal; 'warn' adds warnings; 'any' shows all."),
        ] = "error",
        query: Annotated[str, Field(description=f"Only lines matching this: {syntax}. Empty: all lines.")] = "",
        limit: Annotated[
            int, Field(ge=1, le=MAX_LIMIT, description="Newest matching lines to show; the counts cover all of them.")
        ] = 20,
        *,
        ctx: CallContext,
    ) -> ToolOutput:
        if not service.strip():
            raise ToolFailure(
                "service is empty.", hint="Name the service whose logs to search, e.g. service='checkout'."
            )
        current = now()
        start, end = parse_time(since, current), parse_time(until, current)
        if start >= end:
            raise ToolFailure(
                f"since ({since!r}) is not before until ({until!r}).",
                hint="since is the start of the window, e.g. since='1h', until='now'.",
            )
        q = LogQuery(
            service=service.strip(),
            since=start,
            until=end,
            level=None if level in ("any", "all") else canonical_level(level),
            query=query.strip(),
            limit=limit,
            sample=max(sample, limit),
            redactor=ctx.redactor,  # dispatch's: the backend redacts raw records before they are reshaped
        )
        result = await store.search(q)
        link = _source_link(settings, shown, q)
        view = format_result(q, result, window=f"{describe_time(since, start)}..{describe_time(until, end)}")
        return ToolOutput(
            view.text, headline=log_headline(q, result), links=(link,) if link is not None else (), more=view.more
        )

    search_logs.__doc__ = DESCRIPTION.format(caveat=caveat, syntax=syntax)
    return [
        tool_from_function(
            search_logs,
            summary="Search a service's logs over a time window, messages grouped",
            timeout=settings.timeout_s,
            returns="the number of matching lines, their messages grouped by count, each with its newest and first "
            "lines (time, level, pod, message), then other lines.",
        )
    ]


DESCRIPTION = """Search one service's logs in a time window: how many lines match, their messages grouped by count
(numbers and ids folded) with first and last times, and the newest lines.
Use it once a metric or an alert points at a service, to see what it logs (errors, timeouts, upstream failures)
and since when; widen since to find when the errors began.
Pitfalls:
- 5xx at a service may be produced by the gateway or proxy in front of it: search service=gateway (or the ingress) too.
- level is a minimum: level=error (the default) hides warnings; use level=warn to add them,
level=any (or all) for everything.{caveat}
- 0 lines is not proof of health: the result names the services that do have logs; check the name, level and window.
query is {syntax}."""


def _source_link(settings: LogsSettings, links: LinkSettings, q: LogQuery) -> SourceLink | None:
    """Where a person sees the lines of `q` on the configured backend, or None (files, or no UI configured)."""
    match settings.backend:
        case "loki":
            url = loki_explore(links, settings.loki, q)
        case "elasticsearch":
            url = kibana_discover(links, settings.elasticsearch, q)
        case "files":
            url = None
    return SourceLink(LABEL, url) if url is not None else None


def _query_help(settings: LogsSettings) -> tuple[str, str]:
    """The backend's query syntax, and a caveat about its level filter (if any) for the description."""
    match settings.backend:
        case "loki":
            caveat = LEVEL_FILTER_NOTES[settings.loki.level_filter]
            return LOKI_QUERY_SYNTAX, f"\n- On this log store, {caveat}."
        case "elasticsearch":
            return ES_QUERY_SYNTAX, ""
        case _:
            return FILES_QUERY_SYNTAX, ""


def _secret(env_name: str | None, setting: str, environ: Mapping[str, str]) -> str | None:
    if env_name is None:
        return None
    value = environ.get(env_name)
    if not value:
        raise ValueError(f"{setting} names the environment variable {env_name}, but it is not set or is empty")
    return value
