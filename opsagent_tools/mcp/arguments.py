"""An MCP tool's arguments: every call is checked against the server's full JSON Schema; the model is shown the
trimmed copy `offer.py` makes of it.

Each tool gets a pydantic model carrying both, so dispatch validates MCP calls exactly where it validates every
other call (before any approval is asked for), and a mistake comes back naming the field and what was expected.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from jsonschema import Draft202012Validator, SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from opsagent_tools.bounded_json import deeper_than

MAX_SCHEMA_DEPTH = 64
"""Arrays and objects inside one another in an inputSchema (a real one nests about 10): deeper ones are refused
before `jsonschema`, which recurses several frames a level, reads them."""
MAX_PROBLEMS = 8
"""More schema violations than this in one call are summarised: the first few are enough to fix it."""
MAX_MESSAGE_CHARS = 300


class McpArguments(BaseModel):
    """The validated arguments of one MCP tool call, passed to the server as they are."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    """The server's full schema: what every call must satisfy."""
    offered_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    """What the model is shown of it (`offer.py`)."""
    schema_validator: ClassVar[Validator] = Draft202012Validator({"type": "object"})

    arguments: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _against_the_schema(cls, data: Any) -> dict[str, Any]:
        problems = list(cls.schema_validator.iter_errors(data))
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, [_line(error) for error in problems[:MAX_PROBLEMS]])
        return {"arguments": data}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The schema the model is shown (a copy), not one pydantic derives."""
        return copy.deepcopy(cls.offered_schema)


def checked_schema(input_schema: Any) -> dict[str, Any]:
    """The server's inputSchema, if it is a valid JSON Schema of an object (with `true`/`false` property schemas
    spelled as objects); else a ValueError that says what is wrong with it."""
    if not isinstance(input_schema, dict) or input_schema.get("type") != "object":
        raise ValueError('its inputSchema is not a JSON Schema of an object ({"type": "object", ...})')
    if deeper_than(input_schema, MAX_SCHEMA_DEPTH):
        raise ValueError(f"its inputSchema nests deeper than {MAX_SCHEMA_DEPTH} levels")
    schema = _object_properties(input_schema)
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"its inputSchema is not valid JSON Schema: {exc.message[:MAX_MESSAGE_CHARS]}") from exc
    return schema


def arguments_model(tool_name: str, schema: dict[str, Any], offered: dict[str, Any]) -> type[McpArguments]:
    """The arguments model of one MCP tool: calls checked against `schema` (from `checked_schema`), `offered`
    shown to the model."""
    validator = validator_for(schema, default=Draft202012Validator)(schema)
    namespace = {
        "input_schema": schema,
        "offered_schema": offered,
        "schema_validator": validator,
        "__module__": __name__,
    }
    return type(f"{tool_name}_arguments", (McpArguments,), namespace)


def _object_properties(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with boolean property schemas spelled as objects (`true` -> `{}`), the form every consumer reads."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    spelled = {name: _as_object(value) for name, value in properties.items()}
    return {**schema, "properties": spelled}


def _as_object(schema: Any) -> Any:
    if schema is True:
        return {}
    if schema is False:
        return {"not": {}}
    return schema


def _line(error: Any) -> InitErrorDetails:
    message = str(error.message)
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + " …"
    return InitErrorDetails(
        type=PydanticCustomError("json_schema", "{problem}", {"problem": message}),
        loc=tuple(error.absolute_path),
        input=error.instance,
    )
