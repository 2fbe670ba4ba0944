"""Which parsed values are tool calls, and what they ask for: the call shapes models write.

Every text family ends in a JSON object or a Python call; one interpreter turns those into `ToolCall`s the same way.
"""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from typing import Any

from kernel.calls import FINISH_TOOL, ToolCall
from kernel.parsing.lenient_json import LenientJSONError, load_lenient

_STRONG_NAME_KEYS = ("action", "tool")
_WEAK_NAME_KEYS = ("name", "toolname", "functionname", "function", "recipientname")
_ARGS_KEYS = ("args", "arguments", "parameters", "params", "input", "actioninput", "toolinput", "toolargs", "kwargs")
_EXPLICIT_WRAPPERS = ("function", "functioncall", "toolcall")
_PLAIN_WRAPPERS = ("action", "tool", "command", "call")
_LIST_WRAPPERS = ("toolcalls", "functioncalls", "tooluses")
_THOUGHT_KEYS = frozenset({"thought", "thoughts", "reasoning", "explanation"})
_ENVELOPE_KEYS = frozenset({"id", "type", "index", "callid", "toolcallid"})
_META_KEYS = _THOUGHT_KEYS | _ENVELOPE_KEYS
_LOG_KEYS = frozenset({"level", "severity", "timestamp", "ts", "@timestamp", "time", "logger", "hostname", "pid"})
_ANSWER_KEYS = ("finalanswer", "answer")
_ANSWER_ALIASES = frozenset({"finalanswer", "response", "result", "output", "text", "content", "message", "summary"})
_NOT_A_NAME = frozenset({"none", "null", "nil", "n/a", "nothing", "noaction", "no_action"})
_KEY_NOISE = re.compile(r"[\s_\-]")
_NAME_PREFIX = re.compile(r"^(?:functions?|default_api)\.")
_NAME_SUFFIX = re.compile(r"(?:\.call|\(\s*\)|:\d+)$")
_TOOL_NAME = re.compile(r"[^\W\d][\w.\-:/]{0,127}")
_LOOSE_NAME = re.compile(r"[^\n<>{}\[\]]{1,128}")


def _norm_key(key: str) -> str:
    return _KEY_NOISE.sub("", key).casefold()


def _is_finish(name: str) -> bool:
    return _norm_key(name) in ("finish", "finalanswer")


@lru_cache(maxsize=1024)
def normalize_tool_name(raw: str) -> str:
    """A tool name as the registry spells it, or "" when the text is not a name at all (remembered: a run names
    the same few tools turn after turn)."""
    name = raw.strip().strip("`'\"*").strip()
    name = _NAME_SUFFIX.sub("", _NAME_PREFIX.sub("", name))
    if _is_finish(name):
        return FINISH_TOOL
    return name if _TOOL_NAME.fullmatch(name) and name.casefold() not in _NOT_A_NAME else ""


def decode_args(value: Any) -> dict[str, Any]:
    """Arguments as a dict: a JSON-encoded string is decoded, anything but an object becomes `{"_raw": value}`."""
    if value is None:
        return {}
    if isinstance(value, str):
        text = strip_fence(value).strip()
        if not text:
            return {}
        if text[0] not in "{[\"'":
            return {"_raw": value}
        try:
            value = load_lenient(text)
        except LenientJSONError:
            return {"_raw": value}
    return value if isinstance(value, dict) else {"_raw": value}


def make_call(name: str, args: dict[str, Any]) -> ToolCall:
    """The call, with a `finish` answer given bare or under another key moved to `answer`."""
    if name == FINISH_TOOL and "answer" not in args and len(args) == 1:
        key, value = next(iter(args.items()))
        if key == "_raw":
            args = {"answer": value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}
        elif isinstance(value, str) and _norm_key(key) in _ANSWER_ALIASES:
            args = {"answer": value}
    return ToolCall(name=name, args=args)


def calls_from_value(value: Any, explicit: bool, depth: int = 0) -> list[ToolCall] | None:
    """The calls a parsed JSON value makes, or None when it is data. `explicit`: tool-call markup vouches for it."""
    if depth > 4:
        return None
    if isinstance(value, list):
        if not value or len(value) > 64:
            return None
        found = [calls_from_value(item, explicit, depth + 1) for item in value]
        if not explicit and not all(found):
            return None
        return [call for group in found if group for call in group] or None
    return _calls_from_object(value, explicit, depth) if isinstance(value, dict) else None


def _calls_from_object(obj: dict[Any, Any], explicit: bool, depth: int) -> list[ToolCall] | None:
    keys = {_norm_key(key): key for key in obj if isinstance(key, str)}
    field = {norm: obj[key] for norm, key in keys.items()}
    for wrapper in _LIST_WRAPPERS:
        if isinstance(field.get(wrapper), list):
            return calls_from_value(field[wrapper], True, depth + 1)
    for wrapper in (*_EXPLICIT_WRAPPERS, *_PLAIN_WRAPPERS):
        if isinstance(field.get(wrapper), dict):
            calls = _calls_from_object(field[wrapper], explicit or wrapper in _EXPLICIT_WRAPPERS, depth + 1)
            if calls:
                return calls
    strong = next((k for k in _STRONG_NAME_KEYS if isinstance(field.get(k), str)), None)
    name_key = strong or next((k for k in _WEAK_NAME_KEYS if isinstance(field.get(k), str)), None)
    if name_key is None:
        return _answer_as_finish(field)
    args_key = next((k for k in _ARGS_KEYS if k in field and k != name_key), None)
    name = normalize_tool_name(field[name_key])
    if not name and strong and args_key and _LOOSE_NAME.fullmatch(field[name_key].strip()):
        name = field[name_key].strip()  # an odd name in an unmistakable call: the caller reports it as unknown
    if not name or name.casefold() in _NOT_A_NAME:
        return None
    if args_key:
        value = field[args_key]
        extra = set(field) - {name_key, args_key} - _META_KEYS
        if not (strong or explicit) and (extra or not isinstance(value, dict | str | None)):
            return None  # `{"name": "app", "image": ..., "args": [...]}` is a container spec, not a call
        args = decode_args(value)
    elif strong or explicit:
        if not explicit and set(field) & _LOG_KEYS:
            return None
        dropped = _META_KEYS if explicit else _THOUGHT_KEYS  # flat arguments: `{"action": "get_pod", "id": "p-1"}`
        args = {keys[k]: v for k, v in field.items() if k != name_key and k not in dropped}
    else:
        return None
    return [make_call(name, args)]


def _answer_as_finish(field: dict[str, Any]) -> list[ToolCall] | None:
    for key in _ANSWER_KEYS:
        if isinstance(field.get(key), str) and not set(field) - {key} - _META_KEYS:
            return [ToolCall(name=FINISH_TOOL, args={"answer": field[key]})]
    return None


def carried_thought(value: Any) -> str:
    """A thought the model put inside its call object (`{"thought": ..., "action": ...}`)."""
    obj = value[0] if isinstance(value, list) and value else value
    if not isinstance(obj, dict):
        return ""
    for key in ("thought", "reasoning", "thoughts"):
        found = obj.get(key)
        if isinstance(found, dict):
            found = found.get("text") or found.get("reasoning")
        if isinstance(found, str) and found.strip():
            return found.strip()
    return ""


def calls_from_python(source: str, keywords_only: bool = False) -> list[ToolCall] | None:
    """Calls written as Python (`name(k=v)`, `[a(), b()]`, `print(default_api.x())`); parsed, never run."""
    source = strip_fence(source).strip().rstrip(";")
    if not source or len(source) > 20_000:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    calls: list[ToolCall] = []
    for statement in tree.body:
        if not isinstance(statement, ast.Expr):
            return None
        node = statement.value
        for item in node.elts if isinstance(node, ast.List | ast.Tuple) else [node]:
            call = _python_call(item, keywords_only)
            if call is None:
                return None
            calls.append(call)
    return calls or None


def _python_call(node: ast.expr, keywords_only: bool) -> ToolCall | None:
    if isinstance(node, ast.Call) and _dotted(node.func) == "print" and len(node.args) == 1:
        node = node.args[0]
    if not isinstance(node, ast.Call) or any(kw.arg is None for kw in node.keywords):
        return None
    name = normalize_tool_name(_dotted(node.func))
    if not name or (keywords_only and node.args):
        return None
    try:
        args: dict[str, Any] = {str(kw.arg): _jsonable(ast.literal_eval(kw.value)) for kw in node.keywords}
        positional = [_jsonable(ast.literal_eval(arg)) for arg in node.args]
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
    if positional:
        args["_raw"] = positional[0] if len(positional) == 1 else positional
    return make_call(name, args)


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _jsonable(item) for key, item in value.items()}
    raise TypeError("not JSON data")


_OPENING_FENCE = re.compile(r"\s*+```[\w+.\-]*[ \t]*\n?")


def strip_fence(text: str) -> str:
    """The text without a Markdown code fence around it: the opening fence's line at the start, and a closing
    fence at the end with the blanks and the newline before it (cut with string methods: a regex searching for the
    closing fence rescanned a run of tabs from each of them)."""
    opening = _OPENING_FENCE.match(text)
    body = text[opening.end() :] if opening else text
    end = len(body.rstrip())
    if not body.endswith("```", 0, end):
        return body
    cut = len(body[: end - 3].rstrip(" \t"))
    return body[: cut - 1 if body.endswith("\n", 0, cut) else cut]
