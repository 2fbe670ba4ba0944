"""`python -m bench.verified_picture`: an approved rollback verified in a real Slack thread, as a picture for the README.

A real Prometheus scrapes a local exporter every second (`testkit.servers.live_prometheus`): order-service's 5xx
share sits at 0.1%, then jumps to 12%. The real Slack app (HTTP mode) runs an investigation on the tests' fake
Slack that reads it, an approver approves the rollback, and the rollback brings the share back to 0.2%; `after_s`
later the read is made again. The thread, once the verdict and the rollback's line say the action held, is rendered
by `bench.thread_render` and screenshotted in headless Chromium to docs/slack-verified.png.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from bench.thread_picture import CHROMIUM, thread_height
from bench.thread_render import Directory, render_thread
from bot.slack.action_ids import APPROVE
from bot.slack.settings import SlackSettings
from bot.telemetry.log_setup import configure_logging
from bot.verification.settings import VerificationSettings
from kernel import text_turn
from testkit.fakes.slack_api import SlackFake
from testkit.fakes.slack_workspace import BOT_USER_ID
from testkit.servers.live_prometheus import RollbackBot, live_incident
from testkit.slack_bot import CHANNEL, running_app, temporary_store

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "slack-verified.png"
ONCALL, APPROVER = "U07MARIA1", "U07SAM42X"
USERS = {ONCALL: "Maria (on call)", APPROVER: "Sam (SRE lead)", BOT_USER_ID: "opsagent"}
SERVICE = "order-service"
TASK = f"{SERVICE} 5xx went from 0.1% to 12%, find the root cause"
AFTER_S = 5.0
SCRIPT = [
    text_turn(
        "query_metrics",
        "Why: when did the 5xx start, and how high is it?",
        service=SERVICE,
        metric="http_5xx_rate",
        window="5m",
        step="1s",
    ),
    text_turn(
        "rollback_deployment",
        "Known: the 5xx jumped to 12% right after v2.14.0 rolled out (step 1). Why: rolling back is the fastest "
        "way to stop it.\nHypothesis: v2.14.0 broke order-service (likely)",
        service=SERVICE,
        to_version="v2.13.2",
    ),
    text_turn(
        "finish",
        "Known: the rollback went out.",
        summary="Deploy v2.14.0 broke order-service: its 5xx share went from 0.1% to 12%.",
        root_cause="A change in v2.14.0 of order-service.",
        confidence="likely",
        evidence=[{"claim": "the 5xx share jumped from 0.1% to 12% as v2.14.0 rolled out", "steps": [1]}],
        next_steps=["compare v2.13.2 and v2.14.0 before re-deploying"],
    ),
]


async def verified_thread(root: Path) -> tuple[list[dict[str, object]], dict[str, list[str]]]:
    """The investigation through the Slack app on the fake Slack, until the rollback is verified; the thread's
    messages (Slack's JSON) and reactions."""
    users = {user: {"name": name} for user, name in USERS.items() if user != BOT_USER_ID}
    checks = VerificationSettings(after_s=AFTER_S, recheck_after_s=0)
    with live_incident(root, (SERVICE,)) as incident:
        bot = RollbackBot([SCRIPT], incident, 0.002)
        options = {"verification": checks, "symptoms": incident.metrics(), "trace_link": _viewer}
        async with (
            SlackFake(users=users) as slack,
            temporary_store() as store,
            running_app(slack, bot, store, settings=SlackSettings(approvers=[APPROVER]), start=True, **options) as app,
        ):
            ts = await app.mention(TASK, user=ONCALL)
            message, approval_id = await app.until(lambda: app.approval_message(ts), "the approval", 30)
            assert await app.click(APPROVE, approval_id, message.ts, ts, user=APPROVER) == 200
            await app.ended(ts, within=30)

            def held() -> bool:
                shown = (app.verdict(ts), slack.message(CHANNEL, message.ts))
                return all(m is not None and "· held" in json.dumps(m.blocks, ensure_ascii=False) for m in shown)

            await app.until(held, "the rollback verified, in the verdict and on its line", AFTER_S + 30)
            thread = slack.thread(CHANNEL, ts)
            return [m.to_api() for m in thread], {m.ts: list(slack.reactions.get((CHANNEL, m.ts), [])) for m in thread}


def _viewer(run_id: str) -> str:
    return f"https://opsagent.example.com/runs/{run_id}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.verified_picture", description=__doc__)
    parser.add_argument("--output", type=Path, default=PICTURE, help=f"the PNG to write (default {PICTURE})")
    args = parser.parse_args(argv)
    if not CHROMIUM.is_file():
        print(f"{CHROMIUM} is missing: apt-get install chromium", file=sys.stderr)
        return 1
    configure_logging(json=False)
    with tempfile.TemporaryDirectory(prefix="opsagent-verified-") as root:
        messages, reactions = asyncio.run(verified_thread(Path(root)))
    page = render_thread(messages, Directory(users=USERS, channel="incident-order-service"), reactions=reactions)
    shot = asyncio.run(thread_height(page, args.output))
    print(f"{args.output}: thread {shot.height_px:.0f} px tall, {len(shot.message_heights)} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
