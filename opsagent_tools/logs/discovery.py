"""What `discover` lists from the log store: Loki's stream labels and their values, or Elasticsearch's index
patterns and fields, so that a search names a label, an index or a field that exists.

Local log files have nothing to discover beyond what `search_logs` already lists (the services with logs).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from kernel import ToolFailure
from opsagent_tools.discovery import DiscoverySource, Kind
from opsagent_tools.logs.elasticsearch import ElasticsearchBackend, ElasticsearchSettings
from opsagent_tools.logs.loki import LokiBackend, LokiSettings
from opsagent_tools.logs.search import LogBackend
from opsagent_tools.logs.settings import LogsSettings
from opsagent_tools.names import capped, unknown_name
from opsagent_tools.time_words import format_span

LABELS_WITH_VALUES = 15
"""Labels whose values are fetched along with the label names (one request each)."""
VALUES_SHOWN = 10
LISTED = 100
PATTERNS_SHOWN = 40
_DATED = re.compile(r"[-_.](?:\d{4}[-.]\d{2}(?:[-.]\d{2})?|\d{6,})$")
"""A date or rollover-number suffix of an index name: logs-app-2026.11.30, .ds-logs-app-2026.11.30-000001."""

LOKI_KINDS = (
    Kind(
        "loki_labels",
        "Loki stream labels (the selectors search_logs can use), with some of their values",
        "a label name, e.g. app, to list all its values; none: every label name",
    ),
)
ELASTICSEARCH_KINDS = (
    Kind(
        "elasticsearch_indices",
        "Elasticsearch index patterns (indices grouped by name without their date), with document counts",
        "an index pattern, e.g. logs-*; none: every index",
    ),
    Kind(
        "elasticsearch_fields",
        "the fields of the searched indices and their types (keyword fields can be matched exactly)",
        "an index pattern; none: the index search_logs searches",
    ),
)


class LokiDiscovery:
    """The `discover` source over Loki's label endpoints."""

    kinds: Sequence[Kind] = LOKI_KINDS

    def __init__(
        self, backend: LokiBackend, settings: LokiSettings, now: Callable[[], datetime], lookback: timedelta
    ) -> None:
        self._backend, self._settings, self._now, self._lookback = backend, settings, now, lookback

    async def discover(self, kind: str, filter: str | None) -> str:
        """The labels, or one label's values, over the lookback window."""
        until = self._now()
        since = until - self._lookback
        within = f"in the last {format_span(self._lookback.total_seconds())}"
        names = await self._backend.labels(since, until)
        if filter is not None:
            values = await self._backend.label_values(filter, since, until) if filter in names else []
            if not values:
                return unknown_name("label", filter, names, where=f"is on any stream {within}")
            return f"Values of label {filter} {within} ({len(values)}): {capped(values, LISTED)}"
        sampled = names[:LABELS_WITH_VALUES]
        values_of = await asyncio.gather(*(self._backend.label_values(n, since, until) for n in sampled))
        lines = [
            f"Stream labels {within} ({len(names)}); search_logs selects services by {self._settings.service_label}:"
        ]
        lines += [
            f"  {name} ({len(values)}): {capped(values, VALUES_SHOWN)}"
            for name, values in zip(sampled, values_of, strict=True)
        ]
        if len(names) > len(sampled):
            lines.append(f"  and {len(names) - len(sampled)} more: {capped(names[len(sampled) :], LISTED)}")
        return "\n".join(lines)


class ElasticsearchDiscovery:
    """The `discover` source over Elasticsearch's `_cat/indices` and `_field_caps`."""

    kinds: Sequence[Kind] = ELASTICSEARCH_KINDS

    def __init__(self, backend: ElasticsearchBackend, settings: ElasticsearchSettings) -> None:
        self._backend, self._settings = backend, settings

    async def discover(self, kind: str, filter: str | None) -> str:
        """Index patterns, or the fields of an index pattern."""
        match kind:
            case "elasticsearch_indices":
                return await self._indices(filter or "*")
            case "elasticsearch_fields":
                return await self._fields(filter or self._settings.index)
        raise ToolFailure(f"Elasticsearch lists no kind {kind!r}")

    async def _indices(self, pattern: str) -> str:
        indices = await self._backend.indices(pattern)
        if not indices:
            return f'No open index matches {pattern}. discover(kind="elasticsearch_indices") lists every index.'
        patterns: dict[str, list[tuple[str, int]]] = {}
        for name, count in indices:
            patterns.setdefault(index_pattern(name), []).append((name, count))
        lines = [
            f"Indices matching {pattern}: {len(indices)} in {len(patterns)} patterns (search_logs searches {self._settings.index}):"
        ]
        for group, members in sorted(patterns.items())[:PATTERNS_SHOWN]:
            docs = sum(count for _, count in members)
            span = members[0][0] if len(members) == 1 else f"{members[0][0]} … {members[-1][0]}"
            lines.append(
                f"  {group} ({len(members)} {'index' if len(members) == 1 else 'indices'}, {docs:,} docs): {span}"
            )
        if len(patterns) > PATTERNS_SHOWN:
            lines.append(f"  and {len(patterns) - PATTERNS_SHOWN} more patterns: narrow the filter, e.g. logs-*")
        return "\n".join(lines)

    async def _fields(self, pattern: str) -> str:
        count, types = await self._backend.field_types(pattern)
        fields = {name: kinds for name, kinds in types.items() if not name.startswith("_")}
        if not fields:
            return f'No fields in {pattern} ({count} indices): check the pattern with discover(kind="elasticsearch_indices").'
        by_type: dict[str, list[str]] = {}
        for name, kinds in sorted(fields.items()):
            by_type.setdefault("/".join(kinds), []).append(name)
        lines = [f"Fields of {pattern} ({len(fields)} in {count} indices), by type:"]
        lines += [f"  {kind} ({len(names)}): {capped(names, LISTED)}" for kind, names in sorted(by_type.items())]
        configured = {
            "service_field": self._settings.service_field,
            "level_field": self._settings.level_field,
            "message_field": self._settings.message_field,
            "timestamp_field": self._settings.timestamp_field,
        }
        for setting, name in configured.items():
            if name not in fields:
                missing = unknown_name("field", name, sorted(fields), where=f"is in {pattern}", cap=20)
                lines.append(f"note: logs.elasticsearch.{setting} names a field that is not there. {missing}")
        return "\n".join(lines)


def index_pattern(index: str) -> str:
    """The pattern an index belongs to: its name without date or rollover suffixes (logs-app-2026.11.30 →
    logs-app-*), a data stream's backing index as the stream (.ds-logs-app-2026.11.30-000001 → logs-app)."""
    stream = index.startswith(".ds-")
    name = index.removeprefix(".ds-")
    while (trimmed := _DATED.sub("", name)) != name:
        name = trimmed
    if stream:
        return name
    return f"{name}-*" if name != index else index


def log_discovery(
    settings: LogsSettings, backend: LogBackend, now: Callable[[], datetime], lookback: timedelta
) -> DiscoverySource | None:
    """The `discover` source of the configured log backend, or None for local files."""
    match backend:
        case LokiBackend():
            return LokiDiscovery(backend, settings.loki, now, lookback)
        case ElasticsearchBackend():
            return ElasticsearchDiscovery(backend, settings.elasticsearch)
        case _:
            return None
