"""Trace links (signed, expiring, refused when touched), the `[viewer]` settings, and the bot serving the
page of a run it just finished in a Slack thread, with its security headers, over real HTTP."""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qs, urlsplit

import pytest

from bot.settings import load_settings
from bot.slack.blocks import no_step_urls
from bot.slack.summary import final_summary
from bot.store.records import RunStatus
from bot.verdict import verdict_of
from bot.viewer.server import SECRET_ENV, SECURITY_HEADERS, LinkCheck, LinkSigner, TraceViewer
from bot.viewer.settings import ViewerSettings
from bot.viewer.source import StoredTraces
from kernel import RunResult, StopReason
from samples.trace_runs import INCIDENT_SCRIPT, TASK, incident_run
from testkit.slack_bot import save_run
from worlds.viewer_bot import VIEWER_SECRET, ViewerBot

NOW = 1_800_000_000
signer = LinkSigner(VIEWER_SECRET)


def test_a_signed_link_is_valid_until_it_expires():
    sig = signer.signature("abc123", NOW + 60)
    assert signer.check("abc123", str(NOW + 60), sig, now=NOW) is LinkCheck.VALID
    assert signer.check("abc123", str(NOW + 60), sig, now=NOW + 61) is LinkCheck.EXPIRED


@pytest.mark.parametrize(
    ("run_id", "exp", "sig"),
    [
        ("abc124", str(NOW + 60), signer.signature("abc123", NOW + 60)),  # another run
        ("abc123", str(NOW + 6000), signer.signature("abc123", NOW + 60)),  # a later expiry
        ("abc123", str(NOW + 60), signer.signature("abc123", NOW + 60)[:-1] + "0"),  # a changed signature
        ("abc123", f" {NOW + 60}", signer.signature("abc123", NOW + 60)),  # padding int() would accept
        ("abc123", str(NOW + 60), signer.signature("abc123", NOW + 60).upper()),
        ("abc123", str(NOW + 60), LinkSigner("another-secret-" + "x" * 32).signature("abc123", NOW + 60)),
        ("abc123", str(NOW + 60), "é" * 64),
    ],
)
def test_a_tampered_link_is_refused(run_id, exp, sig):
    assert signer.check(run_id, exp, sig, now=NOW) is LinkCheck.BAD_SIGNATURE


def test_an_expired_link_with_a_bad_signature_is_refused_not_expired():
    assert signer.check("abc123", str(NOW - 60), "0" * 64, now=NOW) is LinkCheck.BAD_SIGNATURE


@pytest.mark.parametrize(("exp", "sig"), [(None, "0" * 64), (str(NOW), None), ("", ""), (None, None)])
def test_a_link_without_its_parameters_is_incomplete(exp, sig):
    assert signer.check("abc123", exp, sig, now=NOW) is LinkCheck.INCOMPLETE


async def test_the_viewer_refuses_to_start_without_a_strong_secret(run_store):
    settings = ViewerSettings(public_url="https://opsagent.example.com/")
    with pytest.raises(ValueError, match=SECRET_ENV):
        TraceViewer.from_settings(settings, run_store.runs, run_store.audit, environ={})
    with pytest.raises(ValueError, match="at least 32 characters"):
        TraceViewer.from_settings(settings, run_store.runs, run_store.audit, environ={SECRET_ENV: "short"})
    viewer = TraceViewer.from_settings(settings, run_store.runs, run_store.audit, environ={SECRET_ENV: VIEWER_SECRET})
    link = urlsplit(viewer.link("abc123"))
    assert (link.scheme, link.netloc, link.path) == ("https", "opsagent.example.com", "/runs/abc123")
    exp = int(parse_qs(link.query)["exp"][0])
    assert exp - time.time() == pytest.approx(7 * 24 * 3600, abs=60)


def test_the_viewer_section_is_read_from_the_config_file(tmp_path):
    config = tmp_path / "opsagent.toml"
    config.write_text('[viewer]\npublic_url = "https://bot.example.com"\nlink_ttl_s = 3600\n')
    settings = load_settings(config, environ={SECRET_ENV: VIEWER_SECRET})
    assert settings.viewer == ViewerSettings(public_url="https://bot.example.com", link_ttl_s=3600)
    assert load_settings(None, environ={}).viewer is None
    config.write_text('[viewer]\npublic_url = "bot.example.com"\n')
    with pytest.raises(ValueError, match="public_url must be an http"):
        load_settings(config, environ={})


def test_the_verdict_links_the_trace_with_its_url_escaped_for_mrkdwn():
    verdict = verdict_of(RunResult(run_id="abc123", task="why 5xx?", stop_reason=StopReason.FINISH, answer="v2.14.0"))
    url = "https://bot.example.com/runs/abc123?exp=1800000000&sig=" + "a" * 64
    blocks = json.dumps(final_summary(verdict, step_url=no_step_urls, trace_url=url).blocks)
    assert f"<https://bot.example.com/runs/abc123?exp=1800000000&amp;sig={'a' * 64}|View trace>" in blocks
    assert "View trace" not in json.dumps(final_summary(verdict, step_url=no_step_urls).blocks)


@pytest.fixture
async def bot(tools):
    async with ViewerBot(tools, [list(INCIDENT_SCRIPT)]) as bot:
        yield bot


async def get(bot, url):
    async with bot.http.get(url) as response:
        return response.status, dict(response.headers), await response.text()


async def test_the_final_message_links_to_the_page_of_the_run(bot):
    ts = await bot.investigate(TASK)
    await bot.approve(ts)
    link = await bot.trace_link(ts)
    run_id = urlsplit(link).path.rsplit("/", 1)[1]
    trace = await bot.until(
        lambda: next((f for f in bot.slack.files.values() if f.thread_ts == ts), None), "the trace file"
    )
    assert json.loads(trace.content)["run_id"] == run_id, "the trace file upload stays, for the same run"
    status, headers, page = await get(bot, link)
    assert status == 200
    assert page.count('<li class="step') == 6
    assert "Approval approved by alice at <time" in page, "named as Slack named her when she clicked (audit log)"
    assert "U0ALICE" not in page
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value
    assert headers["Content-Type"] == "text/html; charset=utf-8"


async def test_expired_tampered_incomplete_and_unknown_links_get_small_clear_pages(bot):
    ts = await bot.investigate(TASK)
    await bot.approve(ts)
    link = await bot.trace_link(ts)
    run_id = urlsplit(link).path.rsplit("/", 1)[1]
    expired = bot.viewer.link(run_id, expires=int(time.time()) - 1)
    other_run = link.replace(run_id, "0" * 12)
    cases = [
        (expired, 410, "This trace link has expired", f"opsagent-trace-{run_id}.json"),
        (link[:-1] + ("0" if link[-1] != "0" else "1"), 403, "This trace link is not valid", "exactly as the bot"),
        (link.split("?")[0], 403, "This trace link is incomplete", "Copy the whole"),
        (other_run, 403, "This trace link is not valid", "signature does not match"),
        (bot.viewer.link("0" * 12), 404, "Run not found", "does not know run 000000000000"),
    ]
    for url, status, title, advice in cases:
        got, headers, page = await get(bot, url)
        assert got == status, url
        assert title in page, url
        assert advice in page, url
        assert headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
        assert headers["Cache-Control"] == "private, no-store"


async def test_traces_come_from_the_run_store_so_every_replica_serves_them(tools, run_store):
    result = await incident_run(tools)
    source = StoredTraces(run_store.runs, run_store.audit)
    assert await source(result.run_id) is None  # unknown
    await save_run(run_store, result, status=RunStatus.RUNNING, save_trace=False)
    assert await source(result.run_id) is None  # no step saved yet
    await run_store.runs.checkpoint(result.run_id, status=RunStatus.FINISHED, trace_json=result.to_json())
    assert (await source(result.run_id)).trace.model_dump() == result.model_dump()
