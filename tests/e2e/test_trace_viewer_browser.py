"""The trace viewer in a real headless Chromium (Debian's `chromium`, driven by Playwright): the link the bot
posted in the thread opens the page of the run with every step, under the strict CSP, and screenshots of it
are saved in `test-output/` (kept by CI)."""

from __future__ import annotations

import io
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from playwright.async_api import Browser, ConsoleMessage, async_playwright
from rich.console import Console

from bot.cli.demo import run_demo
from bot.cli.terminal import Terminal
from samples.trace_runs import INCIDENT_SCRIPT, TASK, approve
from testkit.slack_bot import save_run
from worlds.viewer_bot import ViewerBot

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""No sandbox (CI runs as root in a container), and nothing that reaches for the network on its own."""
OUTPUT = Path(__file__).resolve().parents[2] / "test-output"


@pytest.fixture
def chromium() -> Path:
    """Debian's Chromium; its absence fails the test with the package to install."""
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: install the Debian package chromium "
            "(apt-get install -y --no-install-recommends chromium, or run scripts/install-system-deps)"
        )
    return CHROMIUM


@pytest.fixture
async def browser(chromium):
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        yield browser
        await browser.close()


async def screenshot(browser: Browser, url: str, name: str, *, full_page: bool = True) -> tuple[int, list[str]]:
    """Open `url` in a fresh page, save `test-output/<name>`; the HTTP status and any console errors
    (a CSP violation, a failed load) the page caused."""
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", on_console)
    response = await page.goto(url)
    assert response is not None
    OUTPUT.mkdir(exist_ok=True)
    await page.screenshot(path=OUTPUT / name, full_page=full_page)
    await page.close()
    print(f"screenshot: {OUTPUT / name}")
    return response.status, errors


async def test_the_link_in_the_thread_opens_every_step_in_chromium(tools, browser):
    async with ViewerBot(tools, [list(INCIDENT_SCRIPT)]) as bot:
        ts = await bot.investigate(TASK)
        await bot.approve(ts)
        link = await bot.trace_link(ts)
        page = await browser.new_page()
        response = await page.goto(link)
        assert response is not None
        assert response.status == 200
        steps = page.locator("li.step")
        assert await steps.count() == 6
        texts = await steps.all_inner_texts()
        assert [text.split()[:3] for text in texts] == [
            ["Step", "1", "query_metrics"],
            ["Step", "2", "search_logs"],
            ["Step", "3", "search_logs"],
            ["Step", "4", "search_logs"],
            ["Step", "5", "rollback_deployment"],
            ["Step", "6", "finish"],
        ]
        assert "upstream connect error #1500" in texts[1], "the truncated output is shown in full"
        assert "error: exception" in texts[2]
        assert "Approval approved by alice at " in texts[4], "named as she was when she clicked"
        assert "<script>document.title='pwned'</script>" in texts[0], "hostile text shows as text"
        assert await page.locator("img").count() == 0
        assert await page.locator("script").count() == 1, "ours, which localises times; none from the trace"
        assert await page.title() != "pwned"
        assert "Finished with an answer" in await page.locator("#outcome").inner_text()
        await page.close()

        status, errors = await screenshot(browser, link, "trace-viewer-e2e.png")
        assert status == 200
        assert errors == [], "the page must load whole under its CSP"
        assert (OUTPUT / "trace-viewer-e2e.png").stat().st_size > 20_000

        run_id = link.split("/runs/")[1].split("?")[0]
        expired = bot.viewer.link(run_id, expires=int(time.time()) - 1)
        status, _ = await screenshot(browser, expired, "trace-viewer-expired.png")
        assert status == 410
        page = await browser.new_page()
        await page.goto(expired)
        assert await page.locator("h1").inner_text() == "This trace link has expired"
        assert f"opsagent-trace-{run_id}.json" in await page.locator("main").inner_text()
        await page.close()


async def test_times_show_in_the_readers_time_zone_with_utc_on_hover(tools, browser):
    async with ViewerBot(tools, [list(INCIDENT_SCRIPT)]) as bot:
        ts = await bot.investigate(TASK)
        await bot.approve(ts)
        link = await bot.trace_link(ts)
        context = await browser.new_context(timezone_id="Asia/Kolkata", locale="en-GB")
        page = await context.new_page()
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        await page.goto(link)
        started = page.locator("p.meta time").first
        stamp = await started.get_attribute("datetime")
        assert stamp is not None
        utc = datetime.fromisoformat(stamp)
        local = utc.astimezone(ZoneInfo("Asia/Kolkata"))
        assert await started.get_attribute("title") == f"{utc:%Y-%m-%d %H:%M:%S} UTC", "UTC on hover"
        shown = await started.inner_text()
        assert f"{local:%H:%M:%S}" in shown, f"the reader's time (IST, UTC+5:30), not UTC: {shown}"
        assert "UTC" not in shown
        approved = page.locator("#approvals time")
        assert await approved.count() == 1
        assert f"{local:%Y}" in await approved.inner_text()
        assert errors == [], "our script runs under the CSP, by its hash"
        await context.close()


async def test_the_demo_incident_page_in_chromium(tools, browser):
    """The README's screenshot (docs/trace-viewer.png is a copy of test-output/trace-viewer-demo.png)."""
    result = await run_demo(None, terminal=Terminal(Console(file=io.StringIO())), confirm=approve)
    async with ViewerBot(tools, []) as bot:
        await save_run(bot.store, result)
        link = bot.viewer.link(result.run_id)
        status, errors = await screenshot(browser, link, "trace-viewer-demo.png", full_page=False)
    assert status == 200
    assert errors == []
    assert (OUTPUT / "trace-viewer-demo.png").stat().st_size > 20_000
    assert "pool.max_size" in (result.answer or "")
