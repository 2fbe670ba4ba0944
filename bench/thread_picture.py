"""`python -m bench.thread_picture`: the demo investigation in a real Slack thread, as a picture for the README.

The real Slack app (HTTP mode, as `opsagent serve --http`) runs the demo incident on the tests' fake Slack: an
on-call engineer mentions the bot, an approver clicks Approve on the rollback. What the bot posted is rendered by
`bench.thread_render` and screenshotted in headless Chromium (Debian's /usr/bin/chromium, through Playwright) to
docs/slack-thread.png; the page's height is printed, and `thread_height` measures any thread the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from bench.thread_render import Directory, render_thread
from bot.agent import build_agent
from bot.cli.demo import DEMO_TASK, DemoDeploymentWebhook, demo_script
from bot.slack.action_ids import APPROVE
from bot.slack.settings import SlackSettings
from bot.telemetry.log_setup import configure_logging
from kernel import Agent, ConfirmHook, SideEffectMode, SideEffectPolicy
from opsagent_tools.demo_incident import DEMO_SECRET_ENV, write_demo_incident
from opsagent_tools.toolset import build_tools
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_workspace import BOT_USER_ID
from testkit.slack_bot import CHANNEL, running_app, temporary_store

ROOT = Path(__file__).resolve().parents[1]

PICTURE = ROOT / "docs" / "slack-thread.png"
BEFORE_PX, BEFORE_MESSAGES = 4057, 12
"""The demo thread as the bot posted it before the verdict-first thread (commit 41756eb), measured by this script."""
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
ONCALL, APPROVER = "U07MARIA1", "U07SAM42X"
USERS = {ONCALL: "Maria (on call)", APPROVER: "Sam (SRE lead)", BOT_USER_ID: "opsagent"}
FONTS = ("fonts-lato", "fonts-noto-color-emoji")
"""Debian packages for Slack's typeface and colour emoji; without them the picture falls back to DejaVu."""


@dataclass(frozen=True)
class Thread:
    """What Slack holds for one thread: its messages (Slack's JSON, parent first) and reactions by ts."""

    messages: list[dict[str, Any]]
    reactions: dict[str, list[str]]


class DemoBot:
    """The demo incident's tools and scripted model, for the Slack app's agent factory."""

    def __init__(self, root: Path, webhook: DemoDeploymentWebhook) -> None:
        settings = write_demo_incident(root, datetime.now(UTC), action_url=webhook.url)
        self.tools = build_tools(settings, environ={DEMO_SECRET_ENV: webhook.secret})
        self.executed: list[tuple[str, str]] = []
        self.models: list[Any] = []

    def agent_for(self, confirm: ConfirmHook) -> Agent:
        """The demo's agent, side effects allowed behind the thread's approval."""
        policy = SideEffectPolicy(mode=SideEffectMode.FULL)
        return build_agent(None, llm=demo_script(), tools=self.tools, policy=policy, confirm=confirm)


async def demo_thread() -> Thread:
    """Run the demo investigation through the Slack app on the fake Slack; the thread as Slack holds it."""
    users = {user: {"name": name} for user, name in USERS.items() if user != BOT_USER_ID}
    with tempfile.TemporaryDirectory(prefix="opsagent-thread-") as root:
        async with (
            SlackFake(users=users) as slack,
            DemoDeploymentWebhook() as webhook,
            temporary_store() as store,
            running_app(
                slack, DemoBot(Path(root), webhook), store, settings=_settings(), trace_link=_viewer
            ) as harness,
        ):
            ts = await harness.mention(DEMO_TASK, user=ONCALL)
            message, approval_id = await harness.until(lambda: harness.approval_message(ts), "the approval", 30)
            status = await harness.click(APPROVE, approval_id, message.ts, ts, user=APPROVER)
            assert status == 200, f"the click was answered {status}"
            await harness.until(lambda: harness.reacted(ts, "white_check_mark"), "the ✅ on the mention", 30)
            await harness.ended(ts, within=10)
            await harness.until(lambda: _settled(slack.thread(CHANNEL, ts)), "every message in its final state", 10)
            thread = slack.thread(CHANNEL, ts)
            return Thread(
                messages=[m.to_api() for m in thread],
                reactions={m.ts: list(slack.reactions.get((CHANNEL, m.ts), [])) for m in thread},
            )


def _settled(thread: list[Any]) -> bool:
    """No message still says it is running: the summary shows the verdict, the approval its outcome."""
    return not any("running…" in json.dumps(m.blocks, ensure_ascii=False) for m in thread)


def _viewer(run_id: str) -> str:
    """The trace viewer's link to a run, as a deployment with `[viewer] public_url` has one."""
    return f"https://opsagent.example.com/runs/{run_id}"


def _settings() -> SlackSettings:
    """Production's [slack] settings (message spacing, steps batched), with the demo's approver."""
    return SlackSettings(approvers=[APPROVER])


@dataclass(frozen=True)
class Shot:
    """A rendered thread's size: the page and each message (by ts), in CSS pixels."""

    height_px: float
    message_heights: dict[str, float]


async def thread_height(
    html_page: str, picture: Path | None = None, *, width_px: int = 760, scale: float = 1.0
) -> Shot:
    """Lay the page out in headless Chromium: its height and each message's; with `picture`, a PNG of it (`scale`:
    device pixels per CSS pixel)."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = await browser.new_page(viewport={"width": width_px, "height": 600}, device_scale_factor=scale)
        await page.set_content(html_page, wait_until="load")
        heights = await page.eval_on_selector_all(
            ".message", "nodes => nodes.map(n => [n.dataset.ts, n.getBoundingClientRect().height])"
        )
        height = await page.evaluate("document.querySelector('.thread').getBoundingClientRect().height")
        if picture is not None:
            picture.parent.mkdir(parents=True, exist_ok=True)
            await page.locator(".thread").screenshot(path=str(picture))
        await browser.close()
    return Shot(float(height), {str(ts): float(h) for ts, h in heights})


async def picture(path: Path) -> Shot:
    """The demo thread rendered and screenshotted to `path`."""
    thread = await demo_thread()
    directory = Directory(users=USERS, channel="incident-order-service")
    return await thread_height(render_thread(thread.messages, directory, reactions=thread.reactions), path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.thread_picture", description=__doc__)
    parser.add_argument("--output", type=Path, default=PICTURE, help=f"the PNG to write (default {PICTURE})")
    args = parser.parse_args(argv)
    if not CHROMIUM.is_file():
        print(f"{CHROMIUM} is missing: apt-get install chromium", file=sys.stderr)
        return 1
    if not shutil.which("fc-list") or not all(Path(f"/usr/share/doc/{font}").exists() for font in FONTS):
        print(f"note: for Slack's look install {' '.join(FONTS)} (apt); falling back to DejaVu", file=sys.stderr)
    configure_logging(json=False)  # the bot's log lines on stderr; stdout is the measurement
    shot = asyncio.run(picture(args.output))
    print(f"{args.output}: thread {shot.height_px:.0f} px tall, {len(shot.message_heights)} messages")
    print(f"  before: {BEFORE_PX} px, {BEFORE_MESSAGES} messages; after / before: {shot.height_px / BEFORE_PX:.2f}")
    for ts, height in shot.message_heights.items():
        print(f"  message {ts}: {height:.0f} px")
    return 0


if __name__ == "__main__":
    sys.exit(main())
