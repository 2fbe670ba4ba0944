"""The API's OpenAPI document, made from its wire shapes (`bot.api.shapes`): served at `/v1/openapi.json`, and kept
in the repository as `docs/api/openapi.json` (a test checks the two are the same).

`python -m bot.api.openapi > docs/api/openapi.json` writes it again after a change.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from bot.api import shapes
from bot.api.events import EventKind
from bot.api.settings import BODY_BYTES, MAX_TASK_CHARS

REF = "#/components/schemas/{model}"
DESCRIPTION = f"""Ask OpsAgent to investigate, follow the investigation, steer it, and read its verdict.

Every request carries `Authorization: Bearer <token>`, a token of `[api] tokens_env`; the token's name is who asked,
in Slack, the audit log and the trace viewer. A client sees only the investigations it started.

Side effects still need a person: an investigation posted in a Slack channel asks for approvals in its thread; one
posted in no channel asks in `[api] approval_channel`, or has its side effects denied. Nothing here approves.

Request bodies are JSON, at most {BODY_BYTES // 1024} KiB; a task is at most {MAX_TASK_CHARS:,} characters. Limits are
the `[access]` limits of a person, per token: a refusal is 429 with `Retry-After` when a time is known.

The same operations are MCP tools at `/mcp` (streamable HTTP, the same tokens)."""
EVENTS = f"""The investigation's events as Server-Sent Events, from the beginning or after `Last-Event-ID`, ending after
`run_finished`. Kinds: {", ".join(f"`{kind}`" for kind in EventKind)}.

Each event's `id` names the fact it reports (`turn.stage.step.part`) and is the same on every replica and after a
restart: reconnect with the last id you read, and you get every later event once. The checks of approved actions
(`verification`) are made minutes after the run ended and sort after `run_finished`: come back for them with the
last id you read, or read the investigation (each action carries its latest check)."""

ERRORS = {
    "400": "Not JSON, or a Last-Event-ID this API did not send",
    "401": "No token, or an unknown one",
    "403": "A channel where investigations may not start",
    "404": "No investigation with this id was started with this token",
    "409": "The investigation has ended",
    "413": f"A body over {BODY_BYTES // 1024} KiB",
    "422": "A body of the wrong shape (a task too long, an unknown field)",
    "429": "A limit of `[access]`: per token, per channel, at once, the daily spend",
    "502": "Slack did not post the run's opening message",
    "503": "OpsAgent is shutting down, or cannot reach its run store",
}


def _json(schema: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": REF.format(model=schema)}}}


def _operation(summary: str, ok: tuple[str, str, str], errors: tuple[str, ...], **extra: Any) -> dict[str, Any]:
    status, schema, said = ok
    responses = {status: {"description": said, "content": _json(schema)}}
    responses |= {code: {"description": ERRORS[code], "content": _json("Problem")} for code in errors}
    return {"summary": summary, "responses": responses, **extra}


RUN_ID = {"name": "run_id", "in": "path", "required": True, "schema": {"type": "string", "maxLength": 64}}
MODELS: tuple[type[BaseModel], ...] = (
    shapes.InvestigateBody,
    shapes.GuidanceBody,
    shapes.Started,
    shapes.Investigation,
    shapes.Investigations,
    shapes.GuidanceKept,
    shapes.Problem,
)


def openapi_document() -> dict[str, Any]:
    """The whole document (OpenAPI 3.1), its schemas made from the wire shapes."""
    _, schemas = models_json_schema([(model, "serialization") for model in MODELS], ref_template=REF)
    paths = {
        "/v1/investigations": {
            "post": _operation(
                "Start an investigation",
                ("202", "Started", "Started; follow it by its run_id"),
                ("400", "401", "403", "413", "422", "429", "502", "503"),
                requestBody={"required": True, "content": _json("InvestigateBody")},
            ),
            "get": _operation(
                "The investigations this token started, newest first",
                ("200", "Investigations", "The list"),
                ("401", "422"),
                parameters=[
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}}
                ],
            ),
        },
        "/v1/investigations/{run_id}": {
            "get": _operation(
                "An investigation: status, steps, usage, and the verdict once it has ended",
                ("200", "Investigation", "The investigation"),
                ("401", "404"),
                parameters=[RUN_ID],
            ),
        },
        "/v1/investigations/{run_id}/events": {
            "get": {
                "summary": "The investigation's events as they happen",
                "description": EVENTS,
                "parameters": [RUN_ID, {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}}],
                "responses": {
                    "200": {"description": "The event stream", "content": {"text/event-stream": {}}},
                    **{
                        code: {"description": ERRORS[code], "content": _json("Problem")}
                        for code in ("400", "401", "404")
                    },
                },
            }
        },
        "/v1/investigations/{run_id}/guidance": {
            "post": _operation(
                "Tell a running investigation something, as from its thread",
                ("202", "GuidanceKept", "Kept: the model reads it with its next request"),
                ("400", "401", "404", "409", "413", "422", "429", "503"),
                parameters=[RUN_ID],
                requestBody={"required": True, "content": _json("GuidanceBody")},
            ),
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "OpsAgent API", "version": "1", "description": DESCRIPTION},
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": schemas["$defs"],
        },
        "paths": paths,
    }


if __name__ == "__main__":
    print(json.dumps(openapi_document(), indent=2))
