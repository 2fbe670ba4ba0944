"""Log records redacted where a backend reads them: before any line is joined, cut, grouped, matched or shown.

The formatter joins multi-line entries, cuts long lines and folds messages into groups; a secret split by any of
those would slip past a redactor that runs later, so every backend redacts its raw records here first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from kernel import Redactor, StreamRedactor
from opsagent_tools.logs.search import LogRecord

_STREAM_FIELDS = (
    "pod", "kubernetes.pod.name", "k8s.pod.name", "pod_name", "container", "container.id", "container.name",
    "kubernetes.container.name", "host", "host.name", "hostname", "instance", "stream", "filename", "log.file.path",
)  # fmt: skip
"""Fields that name where a record was written: records that agree on them (and the service) are one stream."""


class RecordRedaction:
    """Redacts raw records as a backend reads them, before anything joins, cuts, groups or matches their text.

    Records of one stream (service, pod, container, stream…) must come oldest first: a private key logged one
    line per record is masked in each record after its header (see `StreamRedactor`).
    """

    __slots__ = ("_redactor", "_streams")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._streams: dict[tuple[str, ...], StreamRedactor] = {}

    def redact(self, record: LogRecord) -> LogRecord:
        """The record with every secret in its message and fields masked."""
        message = self._stream(record).redact(record.message)
        return replace(record, message=message, fields=_redacted_fields(self._redactor, record.fields))

    def skip(self, record: LogRecord) -> None:
        """Read a record that will not be shown (outside the window, another level), for its stream's sake."""
        self._stream(record).skip(record.message)

    def _stream(self, record: LogRecord) -> StreamRedactor:
        key = (record.service, *(record.fields.get(name, "") for name in _STREAM_FIELDS))
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = StreamRedactor(self._redactor)
        return stream


def redact_in_order(records: Sequence[LogRecord], redactor: Redactor) -> list[LogRecord]:
    """Records as a backend returned them (newest first), redacted with each stream read oldest first."""
    redaction = RecordRedaction(redactor)
    redacted = list(records)
    for index in sorted(range(len(records)), key=lambda i: (records[i].timestamp, -i)):
        redacted[index] = redaction.redact(records[index])
    return redacted


def _redacted_fields(redactor: Redactor, fields: Mapping[str, str]) -> Mapping[str, str]:
    """Fields redacted as the `name=value` pairs they are shown as, so `password=…` is masked by its name.

    One pass over all pairs; a value with a line break of its own is redacted pair by pair instead.
    """
    if not fields:
        return fields
    pairs = [f"{name}={value}" for name, value in fields.items()]
    lines = redactor.redact("\n".join(pairs)).split("\n")
    if len(lines) != len(pairs):
        lines = [redactor.redact(pair) for pair in pairs]
    redacted = {}
    for (name, value), line in zip(fields.items(), lines, strict=True):
        head = f"{name}="
        redacted[name] = line[len(head) :] if line.startswith(head) else redactor.redact(value)
    return redacted
