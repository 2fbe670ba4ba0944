"""The files backend over real files: formats, filters, counts, multi-line entries, the sandbox, and redaction end to end."""

from __future__ import annotations

import json
import os
from datetime import timedelta

import pytest

from kernel import ErrorKind, ScriptedModel, ToolRegistry, react, text_turn
from opsagent_tools.logs import LogQuery, LogsSettings, log_tools
from opsagent_tools.logs.files import FileLogBackend, FileLogSettings, parse_line
from testkit.fakes.log_servers import NOW
from worlds.dispatch import search_logs


def stamp(minutes_ago: float, sep: str = "T") -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime(f"%Y-%m-%d{sep}%H:%M:%SZ")


def write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def logs(tmp_path):
    """An incident bundle: plain text for order-service, JSON lines from several services, an old line."""
    write(
        tmp_path / "order-service.log",
        [
            f"{stamp(60)} ERROR upstream connect error #1 → payment-service:8443",  # outside a 15m window
            f"{stamp(10)} INFO order 1001 accepted",
            f"{stamp(9)} WARN slow response from inventory-service took 2300ms",
            f"{stamp(8)} ERROR upstream connect error #2 → payment-service:8443",
            f"{stamp(7)} ERROR upstream connect error #3 → payment-service:8443",
            "java.net.ConnectException: Connection refused",
            "\tat com.example.PaymentClient.charge(PaymentClient.java:88)",
            f"{stamp(6, ' ').replace('Z', ',123')} ERROR upstream connect error #4 → payment-service:8443",
        ],
    )
    documents = [
        {
            "ts": stamp(5),
            "level": "error",
            "service": "gateway",
            "msg": "upstream 503 from order-service",
            "pod": "gw-1",
        },
        {"time": stamp(4), "severity": "ERROR", "app": "order-service", "message": "db timeout", "pod": "order-7f9c"},
        {"@timestamp": stamp(3), "level": "info", "service": "gateway", "msg": "GET /orders 200"},
        {
            "timestamp": stamp(2),
            "level": "fatal",
            "service": "order-service",
            "msg": "out of memory",
            "pod": "order-2b1d",
        },
    ]
    write(tmp_path / "all.jsonl", [json.dumps(d) for d in documents])
    write(
        tmp_path / "nested" / "payment-service" / "2026-11-30.log",
        [f"{stamp(4)} ERROR [payment-service] TLS handshake failed"],
    )
    return tmp_path


def tools_for(directory, **settings):
    return log_tools(LogsSettings(files={"directory": directory}, **settings), now=lambda: NOW)


async def search(tools, **args):
    outcome = await search_logs(tools, **args)
    assert outcome.error is None, outcome.text
    return outcome.text


async def test_errors_of_a_service_from_plain_and_json_files_newest_first(logs):
    text = await search(tools_for(logs), service="order-service")
    assert text == "\n".join(
        [
            "order-service, level=error, t-15m..now (03:23:57Z..03:38:57Z): 5 lines",
            "messages by count:",
            "  3 × upstream connect error #<n> → payment-service:8443",
            "      03:32:57Z ERROR upstream connect error #4 → payment-service:8443",
            "      03:31:57Z ERROR upstream connect error #3 → payment-service:8443 ⏎ java.net.ConnectException: "
            "Connection refused ⏎ at com.example.PaymentClient.charge(PaymentClient.java:88)",
            "      03:30:57Z ERROR upstream connect error #2 → payment-service:8443",
            "  1 × out of memory",
            "      03:36:57Z FATAL pod=order-2b1d out of memory",
            "  1 × db timeout",
            "      03:34:57Z ERROR pod=order-7f9c db timeout",
        ]
    )


async def test_level_is_a_minimum_and_any_shows_everything(logs):
    tools = tools_for(logs)
    warn = await search(tools, service="order-service", level="warn")
    assert warn.startswith("order-service, level=warn, t-15m..now (03:23:57Z..03:38:57Z): 6 lines")
    assert "WARN slow response from inventory-service took 2300ms" in warn
    everything = await search(tools, service="order-service", level="any")
    assert ": 7 lines" in everything.splitlines()[0]
    assert "INFO order 1001 accepted" in everything
    fatal = await search(tools, service="order-service", level="fatal")
    assert ": 1 lines" in fatal.splitlines()[0]


async def test_window_is_applied_with_relative_and_iso_times(logs):
    tools = tools_for(logs)
    wide = await search(tools, service="order-service", since="2h")
    assert ": 6 lines" in wide.splitlines()[0]
    assert "4 × upstream connect error #<n> → payment-service:8443  (02:38:57Z..03:32:57Z)" in wide
    narrow = await search(tools, service="order-service", since=stamp(8), until=stamp(7))
    assert narrow.splitlines()[0] == (
        "order-service, level=error, 2026-11-30T03:30:57Z..2026-11-30T03:31:57Z (03:30:57Z..03:31:57Z): 2 lines"
    )


async def test_service_comes_from_the_line_or_from_the_file_name_or_folder(logs):
    tools = tools_for(logs)
    gateway = await search(tools, service="gateway", level="any")
    assert ": 2 lines" in gateway.splitlines()[0]
    assert "03:33:57Z ERROR pod=gw-1 upstream 503 from order-service" in gateway
    payment = await search(tools, service="Payment-Service")
    assert "03:34:57Z ERROR TLS handshake failed" in payment


async def test_query_is_a_case_insensitive_substring_or_a_regex(logs):
    tools = tools_for(logs)
    assert ": 1 lines" in (await search(tools, service="order-service", query="DB TIMEOUT")).splitlines()[0]
    by_field = await search(tools, service="order-service", query="order-2b1d")
    assert "out of memory" in by_field
    regex = await search(tools, service="order-service", query=r"re:error #[34]\b")
    assert ": 2 lines" in regex.splitlines()[0]
    in_trace = await search(tools, service="order-service", query="PaymentClient.java")
    assert ": 1 lines" in in_trace.splitlines()[0]  # continuation lines belong to their entry
    outcome = await search_logs(tools, service="order-service", query="re:(unclosed")
    assert outcome.error.kind is ErrorKind.EXCEPTION
    assert outcome.text.startswith(
        "[ToolError] exception: 'search_logs' failed: The query 're:(unclosed' is not a valid regular expression "
        "(missing ): (unclosed). Patterns use RE2 syntax"
    )
    assert outcome.text.endswith("Fix the pattern, or search for a plain substring instead.")


async def test_total_counts_every_match_while_lines_shown_follow_limit(tmp_path):
    def line(i):
        when = (NOW - timedelta(seconds=1200 - i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return f"{when} ERROR timeout after {i}ms calling tax-api"

    write(tmp_path / "checkout.log", [line(i) for i in range(1200)])
    outcome = await search_logs(tools_for(tmp_path, sample_size=50), service="checkout", since="1h", limit=3)
    lines = outcome.text.splitlines()
    assert lines[0].endswith(": 1,200 lines")
    assert lines[1:3] == ["messages by count:", "  1,200 × timeout after <dur> calling tax-api  (03:18:57Z..03:38:56Z)"]
    assert lines[3:] == [
        "      03:38:56Z ERROR timeout after 1199ms calling tax-api",
        "      03:38:55Z ERROR timeout after 1198ms calling tax-api",
        "      03:38:07Z ERROR timeout after 1150ms calling tax-api",
    ], "the newest two, and the first of the 50 read"
    assert outcome.more.splitlines() == [
        "newest 3 of 1,200:",
        "  03:38:56Z ERROR timeout after 1199ms calling tax-api",
        "  03:38:55Z ERROR timeout after 1198ms calling tax-api",
        "  03:38:54Z ERROR timeout after 1197ms calling tax-api",
    ], "the newest 3 the limit asked for, kept for read_output"


async def test_zero_lines_lists_the_services_seen_in_the_window(logs):
    text = await search(tools_for(logs), service="orders")
    assert text.splitlines()[1:] == [
        'No lines matched. Next: widen the window (since="1h"), drop the level filter (level="any"), '
        "check the service name.",
        'No service "orders" has logs in this window. Nearest: order-service. Known services (3): gateway, '
        "order-service, payment-service.",
    ]


async def test_symlinks_that_escape_the_directory_are_refused(tmp_path):
    outside = write(tmp_path / "secret" / "order-service.log", [f"{stamp(1)} ERROR leaked line from outside"])
    inside = tmp_path / "logs"
    write(inside / "order-service.log", [f"{stamp(2)} ERROR inside line"])
    os.symlink(outside, inside / "escape.log")
    os.symlink(outside.parent, inside / "linked-dir")
    os.symlink(inside / "order-service.log", inside / "alias.log")  # inside: allowed, read once
    text = await search(tools_for(inside), service="order-service")
    assert "leaked" not in text
    assert text.splitlines()[0].endswith(": 1 lines")
    assert text.splitlines()[-1] == f"note: Skipped escape.log: it links to {outside}, outside the log directory."


async def test_missing_directory_and_lines_without_timestamps_are_explained(tmp_path):
    outcome = await search_logs(tools_for(tmp_path / "nope"), service="x")
    assert outcome.text == (
        f"[ToolError] exception: 'search_logs' failed: The log directory {tmp_path / 'nope'} does not exist or is not "
        "a directory. This is a configuration problem (tools.logs.files.directory). Tell the user, and use other evidence (metrics, deploys) meanwhile."
    )
    write(tmp_path / "odd.log", ["no timestamp here", "nor here", f"{stamp(1)} ERROR real"])
    text = await search(tools_for(tmp_path), service="odd")
    assert text.splitlines()[-1] == "note: 2 lines without a leading timestamp were skipped (first: odd.log:1)."


def test_line_formats():
    plain = parse_line("2026-11-30 03:38:57,123 ERROR [order-service] boom", "file")
    assert (plain.timestamp.isoformat(), plain.level, plain.service, plain.message) == (
        "2026-11-30T03:38:57.123000+00:00", "error", "order-service", "boom",
    )  # fmt: skip
    offset = parse_line("2026-11-30T04:38:57+01:00 warning: disk 91% full", "node")
    assert (offset.timestamp.isoformat(), offset.level, offset.service) == ("2026-11-30T03:38:57+00:00", "warn", "node")
    no_level = parse_line("2026-11-30T03:38:57Z upstream reset", "svc")
    assert (no_level.level, no_level.message) == ("", "upstream reset")
    epoch = parse_line('{"ts": 1796009937.5, "level": "ERROR", "msg": "x", "trace": {"id": "abc"}}', "svc")
    assert (epoch.timestamp.isoformat(), epoch.level, dict(epoch.fields)) == (
        "2026-11-30T03:38:57.500000+00:00", "error", {"trace.id": "abc"},
    )  # fmt: skip
    logfmt = parse_line('ts=2026-11-30T03:38:57Z level=warn msg="pool at 95%" pool=db', "svc")
    assert (logfmt.level, logfmt.message, dict(logfmt.fields)) == ("warn", "pool at 95%", {"pool": "db"})
    not_logfmt = parse_line("2026-11-30T03:38:57Z ERROR retry=3 msg=x then gave up", "svc")
    assert not_logfmt.message == "retry=3 msg=x then gave up"  # free text: kept whole, not split into pairs
    assert parse_line("not a log line", "svc") is None
    assert parse_line('{"msg": "json without a time"}', "svc") is None


async def test_backend_keeps_only_the_newest_sample(tmp_path):
    write(tmp_path / "a.log", [f"{stamp(30 - i / 10)} ERROR e{i}" for i in range(100)])
    q = LogQuery("a", NOW - timedelta(hours=1), NOW, "error", "", limit=5, sample=10)
    result = await FileLogBackend(FileLogSettings(directory=tmp_path)).search(q)
    assert result.total == 100
    assert [r.message for r in result.records] == [f"e{i}" for i in range(99, 89, -1)]


# --- secrets in log lines are redacted before the model sees them --------------------------------

SECRET_LINES = [
    f"{stamp(3)} ERROR db connect failed: postgres://orders:s3cr3t-Passw0rd@db.internal:5432/orders",
    f"{stamp(2)} ERROR retrying with password=hunter2hunter2 and AKIAIOSFODNN7EXAMPLE",
]


async def test_secrets_in_log_lines_come_out_redacted_through_dispatch(tmp_path):
    write(tmp_path / "order-service.log", SECRET_LINES)
    outcome = await search_logs(tools_for(tmp_path), service="order-service")
    assert "s3cr3t-Passw0rd" not in outcome.text
    assert "hunter2hunter2" not in outcome.text
    assert "AKIAIOSFODNN7EXAMPLE" not in outcome.text
    assert "postgres://orders:[REDACTED:url_password]@db.internal:5432/orders" in outcome.text
    assert "password=[REDACTED:password]" in outcome.text


async def test_secrets_in_log_lines_never_reach_the_model_in_a_run(tmp_path):
    write(tmp_path / "order-service.log", SECRET_LINES)
    model = ScriptedModel(
        [
            text_turn("search_logs", "Checking order-service errors.", service="order-service", since="15m"),
            text_turn("finish", "Known: DB connections fail (step 1).", answer="The database rejects connections."),
        ]
    )
    result = await react("order-service 5xx", ToolRegistry(tools_for(tmp_path)), llm=model)
    model.assert_complete()
    assert result.ok
    observation = result.steps[0].observation
    assert observation.startswith("order-service, level=error, t-15m..now (03:23:57Z..03:38:57Z): 2 lines")
    assert "[REDACTED:url_password]" in observation
    assert "[REDACTED:password]" in observation
    shown = model.requests[1].messages[-1].content
    for secret in ("s3cr3t-Passw0rd", "hunter2hunter2", "AKIAIOSFODNN7EXAMPLE"):
        assert secret not in shown
        assert secret not in observation
