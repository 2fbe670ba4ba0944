"""The Web API methods on the workspace: who the bot is, its messages and their edits, ephemerals, reactions, the
people and user groups, a thread's status, and a thread's or a channel's history."""

from __future__ import annotations

from typing import Any

from testkit.fakes.slack_api.base import ApiBase, ApiError, json_param, truthy
from testkit.fakes.slack_workspace import Ephemeral, StatusUpdate

MAX_LOADING_MESSAGES = 10


class WorkspaceMethods(ApiBase):
    """`auth.test`, `chat.*`, `reactions.*`, `users.info`, `usergroups.users.list`, `assistant.threads.setStatus`
    and `conversations.replies` / `conversations.history`."""

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": f"https://{self.team_domain}.slack.com/",
            "team": self.team_name,
            "user": self.bot_name,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _chat_post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        blocks = self._checked_blocks(params)
        text = params.get("text")
        markdown_text = params.get("markdown_text")
        if not text and not blocks and not params.get("attachments") and not markdown_text:
            raise ApiError("no_text")
        text, warning = self._truncated(str(text or ""))
        thread_ts = params.get("thread_ts") or None
        message = self._bot_message(
            channel,
            text,
            thread_ts=str(thread_ts) if thread_ts else None,
            blocks=blocks or [],
            metadata=self._metadata(params),
            markdown_text=markdown_text,
            reply_broadcast=thread_ts is not None and truthy(params.get("reply_broadcast")),  # alone, it means nothing
        )
        return {"channel": channel, "ts": message.ts, "message": message.to_api()} | warning

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        message = self._find(channel, params.get("ts"))
        if message.user != self.bot_user_id:
            raise ApiError("cant_update_message")
        blocks = self._checked_blocks(params)
        metadata = self._metadata(params)
        warning: dict[str, Any] = {}
        message.edits.append(
            {"text": message.text, "blocks": message.blocks, "metadata": message.metadata, "replaced_at": self.clock()}
        )
        if params.get("text") is not None:
            message.text, warning = self._truncated(str(params["text"]))
        if blocks is not None:
            message.blocks = blocks
        if metadata is not None:
            message.metadata = metadata
        message.edited = {"user": self.bot_user_id, "ts": self.next_ts()}
        return {"channel": channel, "ts": message.ts, "text": message.text, "message": message.to_api()} | warning

    def _chat_post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        user = params.get("user")
        if not user:
            raise ApiError("user_not_found")
        blocks = self._checked_blocks(params)
        if not params.get("text") and not blocks and not params.get("attachments"):
            raise ApiError("no_text")
        text, warning = self._truncated(str(params.get("text") or ""))
        ephemeral = Ephemeral(
            channel=channel,
            user=str(user),
            text=text,
            blocks=blocks or [],
            thread_ts=params.get("thread_ts") or None,
            message_ts=self.next_ts(),
        )
        self.ephemerals.append(ephemeral)
        return {"message_ts": ephemeral.message_ts} | warning

    def _reactions_add(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        name = str(params.get("name") or "")
        if not name:
            raise ApiError("invalid_name")
        message = self._find(channel, params.get("timestamp"))
        names = self.reactions[(channel, message.ts)]
        if name in names:
            raise ApiError("already_reacted")
        names.append(name)
        return {}

    def _reactions_remove(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        message = self._find(channel, params.get("timestamp"))
        names = self.reactions[(channel, message.ts)]
        name = str(params.get("name") or "")
        if name not in names:
            raise ApiError("no_reaction")
        names.remove(name)
        return {}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(str(params.get("user") or ""))
        if user is None:
            raise ApiError("user_not_found")
        return {"user": user}

    def _usergroups_users_list(self, params: dict[str, Any]) -> dict[str, Any]:
        users = self.usergroups.get(str(params.get("usergroup") or ""))
        if users is None:
            raise ApiError("no_such_subteam")
        return {"users": list(users)}

    def _assistant_set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params, "channel_id")
        thread_ts = params.get("thread_ts")
        if not thread_ts or "status" not in params:
            raise ApiError("invalid_arguments")
        loading = json_param(params.get("loading_messages") or [], "invalid_arguments")
        if not isinstance(loading, list) or len(loading) > MAX_LOADING_MESSAGES:
            raise ApiError("invalid_arguments")
        status = str(params["status"])
        self.status_updates.append(StatusUpdate(channel, str(thread_ts), status, [str(m) for m in loading]))
        self._statuses[(channel, str(thread_ts))] = status
        return {}

    def _conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(params)
        messages = self.thread(channel, str(params.get("ts") or ""))
        if not messages:
            raise ApiError("thread_not_found")
        limit = int(params.get("limit") or 1000)
        page = [m.to_api() for m in messages[:limit]]
        return {"messages": page, "has_more": len(messages) > limit, "response_metadata": {"next_cursor": ""}}

    def _conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        """The channel's messages, newest first: its top level and the replies broadcast to it (with their
        `thread_ts` and the subtype `thread_broadcast`)."""
        channel = self._channel(params)
        messages = list(reversed(self.channel_view(channel)))
        limit = int(params.get("limit") or 100)
        page = [m.to_api() for m in messages[:limit]]
        return {"messages": page, "has_more": len(messages) > limit, "response_metadata": {"next_cursor": ""}}
