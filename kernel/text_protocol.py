"""The text protocol: tools and history spelled as text, for a model (or an endpoint) without native tool calling.

What an adapter sends is `prepare_conversation`'s: the instructions and history as they are for native calls, or
with the tool catalogue appended and native calls and results rewritten as text turns. A tool's signature is
rendered here too, for the catalogue and for the errors that show what a call should look like.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from kernel.llm import ChatRequest, Message, ToolSpec


def render_text_protocol(tools: Iterable[ToolSpec]) -> str:
    """The tool catalogue and reply format for models without native function calling."""
    lines = [
        "## How to act",
        "Reply with your thought, then exactly one JSON block and nothing after it:",
        '```json\n{"action": "<tool name>", "args": {"<argument>": "<value>"}}\n```',
        'When you know the answer: {"action": "finish", "args": {"summary": "<one sentence>", "root_cause": "...", '
        '"confidence": "likely", "evidence": [{"claim": "...", "steps": [2]}], "next_steps": ["..."]}}',
        "",
        "## Tools",
    ]
    lines.extend(f"- {render_signature(spec)}: {spec.description}" for spec in tools)
    return "\n".join(lines)


def render_signature(spec: ToolSpec) -> str:
    """A compact signature such as `query_metrics(service: string, window?: string = "30m")`."""
    props: dict[str, Any] = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", ()))
    parts = []
    for name, schema in props.items():
        optional = "" if name in required else "?"
        default = f" = {json.dumps(schema['default'])}" if "default" in schema else ""
        parts.append(f"{name}{optional}: {_type_name(schema)}{default}")
    return f"{spec.name}({', '.join(parts)})"


def _type_name(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " | ".join(_type_name(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"{_type_name(schema.get('items', {}))}[]"
    if kind == "object" and "properties" in schema:
        return "{" + ", ".join(f"{k}: {_type_name(v)}" for k, v in schema["properties"].items()) + "}"
    return str(kind)


def messages_as_text(messages: Sequence[Message]) -> list[Message]:
    """Rewrite native tool calls and results as text-protocol turns, for an endpoint without tools.

    Used when an adapter falls back to the text protocol mid-run: the history stays meaningful.
    """
    return [message_as_text(message) for message in messages]


def message_as_text(message: Message) -> Message:
    """One message as a text-protocol turn: native calls as JSON blocks, a tool result as an observation; any
    other message as it is (the same object)."""
    if message.role == "assistant" and message.tool_calls:
        blocks = "\n".join(
            "```json\n" + json.dumps({"action": c.name, "args": c.args}, ensure_ascii=False) + "\n```"
            for c in message.tool_calls
        )
        return Message(role="assistant", content=f"{message.content}\n{blocks}".strip())
    if message.role == "tool":
        return Message(role="user", content=f"Observation ({message.tool_name}):\n{message.content}")
    return message


_RENDERED: OrderedDict[int, tuple[Sequence[ToolSpec], str]] = OrderedDict()
RENDERED_CATALOGUES = 32
"""How many tool sets' text-protocol catalogues are remembered (a process serves a few: one per configuration)."""


def _catalogue_text(tools: Sequence[ToolSpec]) -> str:
    """`render_text_protocol(tools)`, rendered once per tuple of specs: every turn of every run on a tool set sends
    the same catalogue (the runs share one tuple, `kernel.catalogue`), and rendering it was a fifth of a turn's CPU.
    A tuple of frozen specs cannot change, so its identity is its content while it lives (the entry holds it)."""
    remembered = _RENDERED.get(id(tools))
    if remembered is not None and remembered[0] is tools:
        _RENDERED.move_to_end(id(tools))
        return remembered[1]
    text = render_text_protocol(tools)
    if isinstance(tools, tuple):
        _RENDERED[id(tools)] = (tools, text)
        if len(_RENDERED) > RENDERED_CATALOGUES:
            _RENDERED.popitem(last=False)
    return text


def prepare_conversation(request: ChatRequest, *, native_tools: bool) -> tuple[str, list[Message]]:
    """The system text and history to send, for native function calling or the text protocol.

    Text protocol: the tool catalogue is appended to the instructions and native calls/results in
    the history are rewritten as text turns. Native: the history is kept, except calls without an id
    (parsed from text) and their id-less results, which no API can pair, so they are rendered as text.
    """
    if not native_tools:
        catalogue = _catalogue_text(request.tools)
        system = f"{request.instructions}\n\n{catalogue}" if request.instructions else catalogue
        history = request.as_text() if request.as_text is not None else messages_as_text(request.messages)
        return system, list(history)
    history: list[Message] = []
    for message in request.messages:
        unpaired_call = message.role == "assistant" and any(call.id is None for call in message.tool_calls)
        unpaired_result = message.role == "tool" and not message.tool_call_id
        history.extend(messages_as_text([message]) if unpaired_call or unpaired_result else [message])
    return request.instructions, history
