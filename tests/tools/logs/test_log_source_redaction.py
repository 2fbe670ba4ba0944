"""A private key in the logs never reaches the model, however it was logged and whichever backend holds it.

The formatter joins multi-line entries with ⏎, cuts lines at 300 characters and groups messages; redaction that
ran after it saw a header without its body. Each shape below is how programs and loggers really write a key.
"""

from __future__ import annotations

import base64
import json
import random
from datetime import timedelta
from pathlib import Path

import pytest

from kernel import DEFAULT_REDACTOR, StreamRedactor
from opsagent_tools.logs import LogsSettings, log_tools
from opsagent_tools.logs.search import LogRecord
from opsagent_tools.logs.source_redaction import RecordRedaction
from testkit.fakes.log_servers import NOW, FakeElasticsearch, FakeLoki, LokiEntry
from worlds.dispatch import search_logs

_RANDOM = random.Random(15)
BODY = [base64.b64encode(_RANDOM.randbytes(48)).decode() for _ in range(25)] + ["QUJDRA=="]
"""A 2048-bit RSA key's worth of base64: 25 lines of 64 characters and a short last one."""
HEADER, FOOTER = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
PEM_LINES = [HEADER, *BODY, FOOTER]

SHAPES: dict[str, list[str]] = {
    "multi-line entry": ["loading TLS key " + "\n".join(PEM_LINES)],
    "one line, spaces": ["loading TLS key " + " ".join(PEM_LINES)],
    "one line, \\n escaped": ["loading TLS key " + "\\n".join(PEM_LINES)],
    "one line, ⏎ joined": ["loading TLS key " + " ⏎ ".join(PEM_LINES)],
    "a record per line": [f"{line}\n" for line in PEM_LINES],
    "a record per line, cut before the footer": [f"{line}\n" for line in PEM_LINES[:-1]] + ["key loaded"],
}
"""What one program printed, as the records its log pipeline stored (one record per element)."""


def leaked(text: str) -> list[str]:
    """Every 16-character piece of the key body that appears in `text`."""
    return [line[i : i + 16] for line in BODY for i in range(0, len(line) - 15, 16) if line[i : i + 16] in text]


def stamp(seconds: float) -> str:
    return (NOW - timedelta(minutes=5) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_files(directory: Path, records: list[str]) -> Path:
    """One record: a plain-text log, continuation lines and all. Several: Docker json-file, a JSON line each."""
    directory.mkdir()
    if len(records) == 1:
        (directory / "order-service.log").write_text(f"{stamp(0)} ERROR [order-service] {records[0]}\n")
    else:
        lines = [json.dumps({"log": r, "stream": "stdout", "time": stamp(n / 1000)}) for n, r in enumerate(records)]
        (directory / "order-service.jsonl").write_text("\n".join(lines) + "\n")
    return directory


async def search(tools: list) -> str:
    outcome = await search_logs(tools, service="order-service", level="any", since="1h", limit=50)
    assert outcome.error is None, outcome.text
    return outcome.text


@pytest.mark.parametrize("records", SHAPES.values(), ids=SHAPES.keys())
async def test_files_backend(tmp_path: Path, records: list[str]) -> None:
    directory = write_files(tmp_path / "logs", records)
    text = await search(log_tools(LogsSettings(files={"directory": directory}), now=lambda: NOW))
    assert leaked(text) == []
    assert "[REDACTED:private_key]" in text


@pytest.mark.parametrize("records", SHAPES.values(), ids=SHAPES.keys())
async def test_loki_backend(records: list[str]) -> None:
    labels = {"service_name": "order-service", "pod": "order-1", "stream": "stdout"}
    entries = [
        LokiEntry(NOW - timedelta(minutes=5) + timedelta(milliseconds=n), labels, r) for n, r in enumerate(records)
    ]
    async with FakeLoki(entries) as loki:
        settings = LogsSettings(backend="loki", loki={"url": loki.url})
        text = await search(log_tools(settings, now=lambda: NOW))
    assert leaked(text) == []
    assert "[REDACTED:private_key]" in text


@pytest.mark.parametrize("records", SHAPES.values(), ids=SHAPES.keys())
async def test_elasticsearch_backend(records: list[str]) -> None:
    docs = [
        {
            "@timestamp": stamp(n / 1000),
            "service": {"name": "order-service"},
            "kubernetes": {"pod": {"name": "order-1"}},
            "message": r,
        }
        for n, r in enumerate(records)
    ]
    async with FakeElasticsearch(docs) as es:
        settings = LogsSettings(backend="elasticsearch", elasticsearch={"url": es.url, "index": "logs-*"})
        text = await search(log_tools(settings, now=lambda: NOW))
    assert leaked(text) == []
    assert "[REDACTED:private_key]" in text


async def test_a_secret_in_a_field_is_masked_by_its_name_and_matched_only_masked(tmp_path: Path) -> None:
    """Fields are redacted as the `name=value` pairs they are shown as; a query cannot probe for a secret."""
    directory = tmp_path / "logs"
    directory.mkdir()
    line = {"ts": stamp(0), "level": "error", "msg": "login failed", "db_password": "hunter2-prod", "user": "bob"}
    (directory / "auth.jsonl").write_text(json.dumps(line) + "\n")
    tools = log_tools(LogsSettings(files={"directory": directory}), now=lambda: NOW)
    shown = await search_logs(tools, service="auth", since="1h")
    assert "db_password=[REDACTED:password]" in shown.text
    probe = await search_logs(tools, service="auth", since="1h", query="hunter2")
    assert ": 0 lines" in probe.text.splitlines()[0]


def test_a_key_open_across_records_ends_at_the_first_record_that_is_not_key_material() -> None:
    stream = StreamRedactor(DEFAULT_REDACTOR)
    out = [stream.redact(text) for text in [HEADER, BODY[0], "request served in 12ms", BODY[1]]]
    assert out == ["[REDACTED:private_key]", "[REDACTED:private_key]", "request served in 12ms", BODY[1]]


def test_records_of_other_streams_between_a_header_and_its_body_do_not_break_the_block() -> None:
    redaction = RecordRedaction(DEFAULT_REDACTOR)
    when = NOW

    def record(pod: str, message: str) -> LogRecord:
        return LogRecord(when, "order-service", "", message, {"pod": pod})

    texts = [redaction.redact(record(pod, text)).message for pod, text in [("a", HEADER), ("b", "ok"), ("a", BODY[0])]]
    assert texts == ["[REDACTED:private_key]", "ok", "[REDACTED:private_key]"]
