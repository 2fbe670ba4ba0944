"""A thread's messages as people wrote them, through `conversations.replies` (scopes channels:history and
groups:history): what a postmortem draft quotes beside the recorded facts.

Bots' messages (OpsAgent's own steps and answers among them) are left out: the run's records say what it did.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import aiohttp
import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

log = structlog.get_logger("opsagent.slack")

MAX_MESSAGES = 500
"""Messages read from one thread at most (a page of 200 at a time)."""
PAGE = 200
MESSAGE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class ThreadMessage:
    """One message a person wrote in the thread."""

    ts: str
    at: datetime
    user: str
    text: str


@dataclass(frozen=True, slots=True)
class ThreadHistory:
    """The people's messages of a thread, and why none could be read (`problem`, "" when they were)."""

    messages: tuple[ThreadMessage, ...]
    problem: str = ""


async def human_messages(client: AsyncWebClient, channel: str, thread_ts: str) -> ThreadHistory:
    """Every message a person wrote in the thread, oldest first (at most `MAX_MESSAGES`); Slack refusing or
    failing is a `problem` to say in the draft, never an exception."""
    found: list[ThreadMessage] = []
    cursor = ""
    try:
        while len(found) < MAX_MESSAGES:
            page = await client.conversations_replies(
                channel=channel, ts=thread_ts, limit=PAGE, **({"cursor": cursor} if cursor else {})
            )
            for message in page.get("messages") or []:
                if message.get("bot_id") or message.get("subtype") or not message.get("user"):
                    continue
                found.append(
                    ThreadMessage(
                        ts=str(message["ts"]),
                        at=datetime.fromtimestamp(float(message["ts"]), UTC),
                        user=str(message["user"]),
                        text=str(message.get("text") or "")[:MESSAGE_CHARS],
                    )
                )
            cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
            if not page.get("has_more") or not cursor:
                break
    except SlackApiError as exc:
        error = str(exc.response.get("error"))
        log.warning("thread_history_unread", channel=channel, error=error)
        hint = " (add the channels:history and groups:history scopes and reinstall)" if error == "missing_scope" else ""
        return ThreadHistory((), f"Slack refused to read the thread: {error}{hint}")
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        log.warning("thread_history_unread", channel=channel, error=repr(exc)[:200])
        return ThreadHistory((), f"Slack could not be reached to read the thread ({type(exc).__name__})")
    return ThreadHistory(tuple(found[:MAX_MESSAGES]))
