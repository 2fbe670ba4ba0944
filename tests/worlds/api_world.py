"""What the API's tests share: the model turns of their runs, and waiting on an investigation's status as a client
does (by asking for it)."""

from __future__ import annotations

import asyncio
from typing import Any

from kernel import text_turn
from testkit.api_client import ApiCaller
from testkit.fakes.slack_api import SlackFake
from testkit.slack_bot import ROLLBACK

CLAUDE_TOKEN = "claude-token-0123456789"
CI_TOKEN = "ci-token-abcdefghijklmnop"
TOKENS = f"claude:{CLAUDE_TOKEN},ci:{CI_TOKEN}"
"""What `OPSAGENT_API_TOKENS` holds in the API's tests: two clients, `claude` and `ci`."""
APPROVALS = "C0APPROVALS"
"""The approval channel of the tests that have one."""
ROLLBACK_TURN = ROLLBACK
WAIT_TURN = text_turn("wait_for_signal", "Why: the test says when.")
QUERY_TURN = text_turn("query_metrics", "Why: see the 5xx rate.", service="order-service")


async def run_status(client: ApiCaller, run_id: str, status: str, within: float = 15.0) -> dict[str, Any]:
    """The investigation once the API says it is `status` (the test fails if it never does)."""
    seen = None
    async with asyncio.timeout(within):
        while True:
            answer = await client.investigation(run_id)
            assert answer.status == 200, answer
            seen = answer.json
            if seen["status"] == status:
                return seen
            await asyncio.sleep(0.05)


def top_messages(slack: SlackFake, channel: str) -> list[Any]:
    """The channel's top-level messages (not replies), oldest first."""
    return [message for message in slack.messages(channel) if not message.is_reply]
