"""An MCP tool's arguments: the server's JSON Schema is what the model sees and what every call is checked against.

Each tool gets a pydantic model carrying its schema, so dispatch validates MCP calls exactly where it validates
every other call (before any approval is asked for), and a mistake comes back naming the field and what was expected.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from jsonschema import Draft202012Validator, SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

MAX_PROBLEMS = 8
"""More schema violations than this in one call are summarised: the first few are enough to fix it."""
MAX_MESSAGE_CHARS = 300


class McpArguments(BaseModel):
    """The validated arguments of one MCP tool call, passed to the server as they are."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}
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
        """The server's own input schema (a copy), not one pydantic derives."""
        return copy.deepcopy(cls.input_schema)


def arguments_model(tool_name: str, input_schema: Any) -> type[McpArguments]:
    """The arguments model of one MCP tool; a schema that is not a valid JSON Schema of an object is a
    ValueError that says what is wrong with it."""
    if not isinstance(input_schema, dict) or input_schema.get("type") != "object":
        raise ValueError('its inputSchema is not a JSON Schema of an object ({"type": "object", ...})')
    schema = _object_properties(input_schema)
    validator_class = validator_for(schema, default=Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"its inputSchema is not valid JSON Schema: {exc.message}") from exc
    namespace = {"input_schema": schema, "schema_validator": validator_class(schema), "__module__": __name__}
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
