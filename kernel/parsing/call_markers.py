"""The markers chat templates put around a tool call, family by family: where a payload starts and stops, and the
markers that name the tool themselves. Data only; `call_blocks` reads the calls out of what they delimit."""

from __future__ import annotations

import re
from typing import NamedTuple


class NamedMarker(NamedTuple):
    """A marker that names the tool: the call's arguments run from it to `closer` (or the end of the reply)."""

    needles: tuple[str, ...]
    """One of these (lower-cased) is in any text the marker matches: a cheap test before the regex."""
    opener: re.Pattern[str]
    """Matches the marker; its `name` (or `alt`) group is the tool's name."""
    closer: re.Pattern[str]


_TAG_NAMES = r"tool_calls?|function_calls?|toolcall|tool_use"
PAYLOAD_MARKER = re.compile(
    rf"<(?P<tag>{_TAG_NAMES})>|<\|(?:python_tag|python_start|tool_calls?|plugin|tool_call_start|start_action)\|>"
    rf"|\bfunctools(?=\s*\[)|\[TOOL_CALLS\](?=\s*[\[{{])",
    re.I,
)
PAYLOAD_NEEDLES = ("<", "functools", "[tool_calls]")
"""One of these is in every text `PAYLOAD_MARKER` matches: a cheap test that skips the regex for most replies."""
PAYLOAD_STOP = re.compile(rf"<\||\[TOOL_CALLS\]|<(?:{_TAG_NAMES})>", re.I)
_XML_CALL, _XML_ARG = "invoke", "parameter"
_BAR, _SEP = "[|\uff5c]", "[\u2581_]"
_DS_SEP = rf"<{_BAR}tool{_SEP}sep{_BAR}>"
_DS_ARGS = rf"<{_BAR}tool{_SEP}call{_SEP}argument{_SEP}begin{_BAR}>"
NAMED_MARKERS: tuple[NamedMarker, ...] = (
    NamedMarker(("<function=",), re.compile(r"<function=(?P<name>[^<>\n]{1,200})>"), re.compile(r"</function>")),
    NamedMarker(
        (f"<{_XML_CALL}",),
        re.compile(rf"<{_XML_CALL}\s+name=\"(?P<name>[^\"<>\n]{{1,200}})\"\s*>"),
        re.compile(rf"</{_XML_CALL}>"),
    ),
    NamedMarker(
        ("[tool_calls]",),
        re.compile(r"\[TOOL_CALLS\]\s*(?P<name>[^\s\[\]{}<]{1,200})\s*(?:\[CALL_ID\][^\[\n]{0,100})?\[ARGS\]"),
        re.compile(r"\[TOOL_CALLS\]|</s>"),
    ),
    NamedMarker(
        ("tool\u2581call\u2581begin", "tool_call_begin"),
        re.compile(
            rf"<{_BAR}tool{_SEP}call{_SEP}begin{_BAR}>\s*"
            rf"(?:function\s*{_DS_SEP}\s*(?P<name>[^\s<]{{1,200}})|(?P<alt>[^\s<]{{1,200}}?)\s*(?:{_DS_SEP}|{_DS_ARGS}))"
        ),
        re.compile(rf"<{_BAR}tool{_SEP}call{_SEP}end{_BAR}>"),
    ),
    NamedMarker(
        ("<|message|>",),
        re.compile(
            r"\bto=(?P<name>[^\s<]{1,200}+)[^\n<]{0,40}+(?:<\|(?:channel|constrain)\|>[^\n<]{0,40}+){0,2}<\|message\|>"
        ),
        re.compile(r"<\|call\|>|<\|end\|>"),
    ),
    NamedMarker(  # Functionary v3.2: `>>>name\n{...}`; `>>>all` is content, not a call
        (">>>",),
        re.compile(r">>>(?!all\s)(?P<name>[A-Za-z_][\w.\-]{0,199})[ \t]*\n(?=\s*[{\[])"),
        re.compile(r">>>|<\|"),
    ),
    NamedMarker(  # ... and its first call at the very start without `>>>` (the generation prompt ends in it): a snake_case
        # name, then one line of JSON that ends the reply or the next call
        ("_",),
        re.compile(r"\A\s*(?P<name>[a-z]+_[a-z0-9_]*)[ \t]*\n(?=[ \t]*[{\[][^\n]*[}\]]\s*(?:>>>|<\||\Z))"),
        re.compile(r">>>|<\|"),
    ),
    NamedMarker(  # Functionary v2: `<|recipient|>name\n<|content|>{...}`; the `all` recipient is content
        ("<|recipient|>",),
        re.compile(r"<\|recipient\|>[ \t]*(?!all\s)(?P<name>[^\s<]{1,200})\s*<\|content\|>"),
        re.compile(r"<\|(?:from|stop|recipient)\|>"),
    ),
    NamedMarker(  # FunctionGemma: `<start_function_call>call:name{key:<escape>value<escape>}<end_function_call>`
        ("<start_function_call>",),
        re.compile(r"<start_function_call>\s*(?:call\s*:)?\s*(?P<name>[^\s{}<>:]{1,200})"),
        re.compile(r"<(?:end_function_call|start_function_call|start_function_response)>"),
    ),
    NamedMarker(
        ("<arg_key>", "</tool_call>"),
        re.compile(r"<tool_call>\s*(?P<name>[^\s<>{}\[\]\"']{1,200})\s*(?=<arg_key>|</tool_call>)", re.I),
        re.compile(r"</tool_call>", re.I),
    ),
)
XML_PARAM = re.compile(
    rf"<(?:{_XML_ARG}=(?P<k1>[^>\n]{{1,200}})|{_XML_ARG}\s+name=\"(?P<k2>[^\"\n]{{1,200}})\""
    r"|arg_key>(?P<k3>[^<]{1,200})</arg_key>\s*<arg_value)>"
    rf"(?P<value>.*?)(?:</(?:{_XML_ARG}|arg_value)>|(?=<{_XML_ARG}[\s=])|$)",
    re.S,
)
