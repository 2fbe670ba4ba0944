"""The Slack side of approvals: posting requests, showing decisions, and looking people up.

These implement the broker's `ApprovalUI` and `Directory` protocols over the Web API client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import structlog
from slack_sdk.web.async_client import AsyncWebClient

from bot.access.directory import SlackUser
from bot.access.identity import Approvers
from bot.approvals.store import ApprovalState, PendingApproval
from bot.slack.approval_blocks import Decision, approval_decided, approval_request
from bot.slack.approval_words import approver_mentions
from bot.slack.outbox import Outbox
from bot.slack.updates import MessageUpdates
from bot.verdict_actions import Action
from kernel import ApprovalRequest, ToolCall

log = structlog.get_logger("opsagent.approvals")

SameCall = Callable[[PendingApproval], Awaitable[Sequence[Action]]]
"""What came of the same call each time the approval's thread proposed it before (`bot.runs.saved`)."""

DECISIONS: dict[ApprovalState, Decision] = {
    ApprovalState.APPROVED: "approved",
    ApprovalState.DENIED: "denied",
    ApprovalState.EXPIRED: "expired",
    ApprovalState.VOIDED: "voided",
}


class SlackApprovalUI:
    """Approval messages in the run's thread, posted through the channel's outbox to keep their order, and
    updated through the message's one writer (which the run's thread shares, to add the outcome)."""

    def __init__(
        self, outbox: Outbox, updates: MessageUpdates, *, approvers: Approvers, same_call: SameCall | None = None
    ) -> None:
        self._outbox = outbox
        self._updates = updates
        self._approvers = approver_mentions(approvers)
        """Who may approve, as Slack mentions: the request names them, so they are notified."""
        self._same_call = same_call

    async def _earlier(self, approval: PendingApproval) -> Sequence[Action]:
        """The same call's earlier outcomes in the thread; none when they cannot be read (the request still goes)."""
        if self._same_call is None:
            return ()
        try:
            return await self._same_call(approval)
        except Exception as exc:  # the store is down: the approver still gets the request, without the history
            log.warning("approval_history_unreadable", approval_id=approval.approval_id, error=repr(exc)[:300])
            return ()

    async def post_request(self, approval: PendingApproval) -> str:
        """Post the Approve/Deny message; its ts binds the buttons to this message."""
        request = ApprovalRequest(
            run_id=approval.run_id,
            step=approval.step,
            call=ToolCall(name=approval.tool, args=approval.args),
            args_hash=approval.args_hash,
            thought=approval.thought,
            summary=approval.summary,
        )
        message = approval_request(
            request,
            approval.approval_id,
            expires_at=approval.expires_at,
            requester=approval.requested_by,
            approvers=self._approvers,
            same_call=await self._earlier(approval),
        )
        answer = await self._outbox.send(
            "chat_postMessage", approval.channel, thread_ts=approval.thread_ts, text=message.text, blocks=message.blocks
        )
        if answer is None:
            raise ConnectionError("Slack refused the approval message")
        return str(answer["ts"])

    async def show_decision(self, approval: PendingApproval) -> None:
        """Collapse the message to one line: who decided, and when (written behind the thread's earlier posts)."""
        decision = DECISIONS.get(approval.state)
        if decision is None or not approval.message_ts:
            return
        message = approval_decided(
            approval.step,
            ToolCall(name=approval.tool, args=approval.args),
            decision,
            approval.decided_by,
            approval.decided_at or approval.created_at,
            approval.reason,
            approval_id=approval.approval_id,
            expired_after=approval.expires_at - approval.created_at,
        )
        # Not awaited: a decision, an expiry or a Stop must not wait on Slack (an outage can last minutes).
        self._updates.set(approval.channel, approval.message_ts, message)


class SlackDirectory:
    """`users.info` and `usergroups.users.list`."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client

    async def user(self, user_id: str) -> SlackUser:
        """Who clicked: workspace, bot, deactivated, guest, and the name Slack shows for them."""
        user = (await self._client.users_info(user=user_id))["user"]
        profile = user.get("profile") or {}
        names = (profile.get("display_name"), profile.get("real_name"), user.get("real_name"), user.get("name"))
        return SlackUser(
            id=user["id"],
            team_id=user.get("team_id", ""),
            is_bot=bool(user.get("is_bot")),
            deleted=bool(user.get("deleted")),
            is_restricted=bool(user.get("is_restricted")),
            is_ultra_restricted=bool(user.get("is_ultra_restricted")),
            name=next((" ".join(str(n).split()) for n in names if n and str(n).strip()), ""),
        )

    async def group_members(self, group_id: str) -> set[str]:
        """The members of an approver user group."""
        return set((await self._client.usergroups_users_list(usergroup=group_id))["users"])
