"""Property tests for the text-protocol parser: it never raises, round-trips its own protocol, invents nothing."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kernel.calls import ToolCall
from kernel.parsing.call_blocks import TRUNCATED_PROBLEM
from kernel.parsing.reply import UNREADABLE_PROBLEM, ParsedOutput, _canonical, _parse, parse_output

FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "\\",
    ":",
    ",",
    " ",
    "\n",
    "```",
    "```json\n",
    '"action"',
    '"name"',
    '"args"',
    '"arguments"',
    '"answer"',
    '"finish"',
    "true",
    "None",
    "x",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "<function=f>",
    "</function>",
    "<parameter=p>",
    "Action:",
    "Action Input:",
    "Final Answer:",
    "Observation:",
    "Thought:",
    "f(",
    "(",
    ")",
    "“",
    "”",
    "：",
    "｛",
    "&quot;",
    '\\"',
    "<escape>",
    "<start_function_call>call:f{",
    "<|START_ACTION|>",
    "<|tool_call_start|>",
    ">>>f\n",
    "all\n",
    "f({",
    "/*",
    "*/",
]

RESERVED_NAMES = {"finish", "finalanswer", "none", "null", "nil", "nothing", "noaction"}
"""Names the parser reads specially: `finish` spellings (their arguments are normalised) and `None`-like words."""

tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,30}", fullmatch=True).filter(
    lambda name: name.replace("_", "").casefold() not in RESERVED_NAMES
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=12,
)
json_args = st.dictionaries(st.text(), json_values, max_size=6)
prose = st.text(
    alphabet=st.characters(blacklist_characters="{}[]<>`", blacklist_categories=("Cs",)),
    max_size=200,
).filter(lambda text: not re.search(r"action|answer", text, re.I))
WORDS = st.sampled_from(
    [
        "the",
        "checkout",
        "service",
        "error",
        "rate",
        "rose",
        "after",
        "deploy",
        "pods",
        "restarted",
        "I",
        "will",
        "query",
        "metrics",
        "next",
        "logs",
        "show",
        "timeouts",
        "database",
        "pool",
        "exhausted",
        "memory",
        "CPU",
        "latency",
        "p99",
        "we",
        "should",
        "look",
        "at",
        "runbook",
        "maybe",
        "rollback",
        "it's",
        '"quoted"',
        "(aside)",
        "5xx",
        "10:02",
        "step",
        "3:",
        "evidence:",
        "confidence",
        "high.",
    ]
)
word_prose = st.lists(st.tuples(WORDS, st.sampled_from([" ", " ", "\n", ", ", ". "])), max_size=60).map(
    lambda pairs: "".join(word + sep for word, sep in pairs)
)


def check_invariants(parsed: ParsedOutput) -> None:
    assert isinstance(parsed, ParsedOutput)
    assert parsed.problem != UNREADABLE_PROBLEM  # the parser's own safety net did not have to catch anything
    assert isinstance(parsed.thought, str)
    for call in parsed.calls:
        assert isinstance(call, ToolCall)
        assert call.name
        assert isinstance(call.args, dict)
    if parsed.calls:
        assert parsed.problem == ""


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text: str):
    check_invariants(parse_output(text))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=80).map("".join))
def test_never_raises_on_json_ish_fragments(text: str):
    check_invariants(parse_output(text))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    name=tool_names,
    args=json_args,
    before=prose,
    after=prose,
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 2]),
)
def test_protocol_block_round_trips(
    name: str, args: dict[str, Any], before: str, after: str, ascii_only: bool, indent: int | None
):
    block = json.dumps({"action": name, "args": args}, ensure_ascii=ascii_only, indent=indent)
    parsed = parse_output(f"{before}\n```json\n{block}\n```\n{after}")
    assert [(call.name, call.args) for call in parsed.calls] == [(name, args)]
    assert parsed.problem == ""


@settings(max_examples=300, deadline=None)
@given(name=tool_names, args=json_args, before=prose)
def test_bare_protocol_object_round_trips(name: str, args: dict[str, Any], before: str):
    assume(before.strip())
    parsed = parse_output(f"{before} {json.dumps({'action': name, 'args': args})}")
    assert [(call.name, call.args) for call in parsed.calls] == [(name, args)]


@settings(max_examples=300, deadline=None)
@given(name=tool_names, args=json_args, before=prose, fenced=st.booleans(), data=st.data())
def test_cut_off_block_yields_no_call_and_says_so(
    name: str, args: dict[str, Any], before: str, fenced: bool, data: Any
):
    block = json.dumps({"action": name, "args": args})
    cut = block[: data.draw(st.integers(min_value=1, max_value=len(block) - 1), label="cut")]
    parsed = parse_output(f"{before}\n```json\n{cut}" if fenced else f"{before}\n{cut}")
    assert parsed.calls == ()
    assert parsed.problem == TRUNCATED_PROBLEM


@settings(max_examples=300, deadline=None)
@given(word_prose)
def test_plain_prose_yields_no_call(text: str):
    parsed = parse_output(text)
    assert parsed.calls == ()
    assert parsed.problem == ""
    assert parsed.thought == text.strip()


_fast_names = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True),
    st.sampled_from(
        ["finish", "Final_Answer", "final_answer", "none", "tool_name", "functions.query", "query_metrics"]
    ),
)
_fast_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


LABELS = st.sampled_from(
    ["Thought: ", "**Thought:** ", "Thought 3: ", "> Thought: ", "thought:", "THOUGHT :", "Known: ", "Plan: ", ""]
)
labelled_thoughts = st.lists(st.tuples(LABELS, st.text(max_size=40)), min_size=1, max_size=3).map(
    lambda parts: "\n".join(label + body for label, body in parts)
)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(
    thought=st.one_of(
        st.text(max_size=80),
        labelled_thoughts,
        st.sampled_from(
            ["Thought: check it", "Known: a\nAction:", "Final Answer:", "all\n", "Thought: x\nObservation: y", "all"]
        ),
    ),
    name=_fast_names,
    args=st.dictionaries(st.text(max_size=10), _fast_values, max_size=4),
    gap=st.sampled_from(["\n", "\n\n", " ", ""]),
)
def test_fast_path_agrees_with_the_full_parser(thought: str, name: str, args: dict[str, Any], gap: str) -> None:
    """The canonical-reply fast path is an optimisation only: wherever it answers, the full parser agrees."""
    text = f"{thought}{gap}```json\n{json.dumps({'action': name, 'args': args})}\n```"
    fast = _canonical(text)
    if fast is not None:
        assert fast == _parse(text)


@settings(max_examples=200)
@given(label=st.sampled_from(["Thought: ", "**Thought:** ", "Thought 2: ", "Thought:\n"]), text=word_prose)
def test_a_labelled_thought_takes_the_fast_path(label: str, text: str) -> None:
    """A `Thought:` label does not send our own reply format to the full parser (it costs ~7x as much)."""
    reply = f"{label}{text}\n```json\n{json.dumps({'action': 'query_logs', 'args': {'service': 'a'}})}\n```"
    fast = _canonical(reply)
    assert fast is not None
    assert fast.calls == (ToolCall(name="query_logs", args={"service": "a"}),)


# --- damage operators: a valid call, written the ways models damage JSON, is still the same call ------------------

_LITERAL_KEYS = {"true", "false", "null", "none", "nan", "infinity", "undefined"}
safe_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True).filter(lambda key: key.lower() not in _LITERAL_KEYS)
safe_strings = st.text(alphabet="abcxyz ABC0129-_./=@%+日志检查", max_size=16)
safe_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | safe_strings,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(safe_keys, inner, max_size=3),
    max_leaves=6,
)
QUOTES = {
    "json": ('"', '"'),
    "python": ("'", "'"),
    "curly": ("“", "”"),
    "curly-single": ("‘", "’"),
    "wide": ("＂", "＂"),
}


@st.composite
def damage(draw: Any) -> dict[str, Any]:
    """One way of writing an object: quotes, key quoting, punctuation, literals, trailing commas, comments."""
    wide = draw(st.booleans())
    return {
        "quote": QUOTES[draw(st.sampled_from(sorted(QUOTES)))],
        "bare_keys": draw(st.booleans()),
        "colon": "：" if wide and draw(st.booleans()) else ":",
        "comma": "，" if wide and draw(st.booleans()) else ",",
        "braces": ("｛", "｝") if wide and draw(st.booleans()) else ("{", "}"),
        "python_literals": draw(st.booleans()),
        "trailing_comma": draw(st.booleans()),
        "comment": draw(st.sampled_from(["", "// the next step\n", "/* why: isolate the pod */ ", "# note\n"])),
    }


def render(value: Any, style: dict[str, Any], top: bool = False) -> str:
    """`value` as JSON-ish text in `style`."""
    open_quote, close_quote = style["quote"]
    if isinstance(value, str):
        return f"{open_quote}{value}{close_quote}"
    if value is None or isinstance(value, bool):
        python = {None: "None", True: "True", False: "False"}
        return python[value] if style["python_literals"] else json.dumps(value)
    if isinstance(value, int):
        return str(value)
    tail = style["comma"] if style["trailing_comma"] and value else ""
    if isinstance(value, list):
        return "[" + style["comma"].join(render(item, style) for item in value) + tail + "]"
    members = [
        f"{key if style['bare_keys'] else render(key, style)}{style['colon']} {render(item, style)}"
        for key, item in value.items()
    ]
    opener, closer = style["braces"]
    comment = style["comment"] if top else ""
    return opener + comment + f"{style['comma']} ".join(members) + tail + closer


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    name=tool_names,
    args=st.dictionaries(safe_keys, safe_values, max_size=4),
    style=damage(),
    before=word_prose,
    wrapper=st.sampled_from(["bare", "fence", "tool_call", "fence-missing-brace", "tag-missing-brace"]),
)
def test_damaged_call_is_still_the_call(
    name: str, args: dict[str, Any], style: dict[str, Any], before: str, wrapper: str
) -> None:
    body = render({"action": name, "args": args}, style, top=True)
    if wrapper.endswith("missing-brace"):
        body = body[: -len(style["braces"][1])]
    reply = {
        "bare": f"{before}\n{body}",
        "fence": f"{before}\n```json\n{body}\n```",
        "tool_call": f"{before}\n<tool_call>\n{body}\n</tool_call>",
        "fence-missing-brace": f"{before}\n```json\n{body}\n```",
        "tag-missing-brace": f"{before}\n<tool_call>\n{body}\n</tool_call>",
    }[wrapper]
    parsed = parse_output(reply)
    assert [(call.name, call.args) for call in parsed.calls] == [(name, args)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    name=tool_names,
    args=st.dictionaries(safe_keys, safe_values, max_size=4),
    before=word_prose,
    layer=st.sampled_from(["escaped", "escaped-in-quotes", "escaped-twice", "html"]),
)
def test_call_escaped_by_a_layer_is_still_the_call(name: str, args: dict[str, Any], before: str, layer: str) -> None:
    block = json.dumps({"action": name, "args": args}, ensure_ascii=False)
    once = json.dumps(block, ensure_ascii=False)[1:-1]
    written = {
        "escaped": once,
        "escaped-in-quotes": f'"{once}"',
        "escaped-twice": json.dumps(once, ensure_ascii=False)[1:-1],
        "html": html.escape(block),
    }[layer]
    parsed = parse_output(f"{before} {written}")
    assert [(call.name, call.args) for call in parsed.calls] == [(name, args)]


CALL_LIKE_WORDS = st.sampled_from(
    [
        "I will call",
        "query_metrics(service)",
        "restart(now)",
        "[see(docs)]",
        "`list_pods()`",
        "the tool",
        "function",
        "action",
        "Action items:",
        "all",
        ">>>",
        ">>> print(x)",
        "call:get_weather",
        "“quoted,”",
        "‘it’s’",
        "：",
        "，",
        "｛job：api｝",
        "{job=api}",
        '{"service": "checkout"}',
        '{"level": "info", "action": "scale", "ts": "10:02"}',
        "{&quot;status&quot;: 1}",
        '{\\"status\\": \\"ok\\"}',
        "<escape>x<escape>",
        "e.g.",
        "then",
        "checkout",
        "logs",
        "5xx",
    ]
)
call_like_prose = st.lists(st.tuples(CALL_LIKE_WORDS, st.sampled_from([" ", "\n", ", ", ". "])), max_size=40).map(
    lambda pairs: "".join(word + sep for word, sep in pairs)
)


@settings(max_examples=500, deadline=None)
@given(call_like_prose)
def test_call_like_prose_never_yields_a_call(text: str) -> None:
    """Prose that names tools, quotes data and uses call-ish punctuation is still prose: the parser invents nothing."""
    parsed = parse_output(text)
    assert parsed.calls == ()
    check_invariants(parsed)
