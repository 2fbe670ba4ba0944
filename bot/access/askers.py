"""Who asks: a person in Slack, a bot's message, a service that proved itself at its own door (Alertmanager), or a
program that called the HTTP API or the MCP server with its bearer token.

Read off a payload at the door, before anything else looks at it; the gate decides what each may do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

AUTHOR_TEAM_FIELDS = ("user_team", "source_team", "team")
"""Where a message event names its author's workspace; in a Slack Connect channel an external author's
workspace shows there, while the envelope's `team_id`/`authorizations` name ours (the receiving install)."""


@dataclass(frozen=True, slots=True)
class Person:
    """A Slack user, and every workspace the payload names for them (all must be allowed)."""

    user: str
    teams: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Bot:
    """A message written by a bot (its `bot_id`, and its user id when Slack gives one)."""

    bot_id: str
    user: str = ""


@dataclass(frozen=True, slots=True)
class Service:
    """Something that authenticated at its own door rather than in Slack: `alertmanager` (a bearer token)."""

    name: str


@dataclass(frozen=True, slots=True)
class ApiClient:
    """A program (a coding agent, an incident tool) that authenticated at the API's door with its bearer token:
    `name` is the token's name in `[api] tokens_env` (`claude`, `ci`)."""

    name: str


Asker = Person | Bot | Service | ApiClient

API_CLIENT_PREFIX = "api:"
"""How an API client is recorded as a requester (`api:claude`): no Slack user id, bot id or service name has a
colon, so its runs and its limits never mix with a person's."""


def author_teams(payload: Mapping[str, Any]) -> tuple[str, ...]:
    """The workspaces a message event names for its author (`user_team`, `source_team`, `team`), each once.

    All must be allowed: an external Slack Connect author shows their own workspace there even though the
    event reaches our installation. None at all is refused as an unknown workspace.
    """
    return tuple(dict.fromkeys(str(payload[field]) for field in AUTHOR_TEAM_FIELDS if payload.get(field)))


def message_author(event: Mapping[str, Any]) -> Person | Bot:
    """Who wrote a message event: a bot when it has a `bot_id`, is a `bot_message`, or names no user."""
    bot_id = str(event.get("bot_id") or "")
    user = str(event.get("user") or "")
    if bot_id or event.get("subtype") == "bot_message" or not user:
        return Bot(bot_id, user)
    return Person(user, author_teams(event))


def clicker(body: Mapping[str, Any]) -> Person:
    """Who clicked a button or submitted a modal: the interaction's `user`, with their own workspace (a Slack Connect
    clicker's is on the user), else the one the payload was sent for."""
    user = body.get("user") or {}
    team = str(user.get("team_id") or (body.get("team") or {}).get("id") or "")
    return Person(str(user.get("id") or ""), (team,) if team else ())


def requester(asker: Asker) -> str:
    """Who a run or draft is asked by, as the store and the thread name them: the user id (a bot's user id, or
    its bot id), the service's name, or `api:` and the API client's name."""
    match asker:
        case Person(user=user):
            return user
        case Bot(bot_id=bot_id, user=user):
            return user or bot_id
        case Service(name=name):
            return name
        case ApiClient(name=name):
            return f"{API_CLIENT_PREFIX}{name}"


def api_client_of(requested_by: str) -> str | None:
    """The name of the API client a requester is (`claude` for `api:claude`); None for anyone else."""
    name = requested_by.removeprefix(API_CLIENT_PREFIX)
    return name if name != requested_by else None
