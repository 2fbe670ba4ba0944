"""Reading the thought and tool calls out of a model's text reply, whatever text protocol it fell back to.

Native tool calling is often missing or leaks into content; one tolerant, never-raising parser keeps every model usable.
"""

from __future__ import annotations

import bisect
import html
import json
import re
from collections.abc import Iterator
from itertools import islice
from typing import Any

from pydantic import BaseModel, ConfigDict

from kernel.calls import FINISH_TOOL, ToolCall
from kernel.parsing.call_blocks import (
    Diagnosis,
    Fence,
    Site,
    block_start,
    fence_sites,
    find_fences,
    json_sites,
    markup_sites,
    overlaps,
)
from kernel.parsing.call_families import code_line_sites, js_arguments, script_sites
from kernel.parsing.call_shapes import calls_from_python, calls_from_value, decode_args, make_call, normalize_tool_name
from kernel.parsing.lenient_json import LenientJSONError, load_lenient, match_closing, scan_spans

UNREADABLE_PROBLEM = "the reply could not be read"

_CANONICAL = re.compile(r"(?P<thought>[^`<>\[\]{}|]*)```json\n(?P<body>\{[^`]*\})\n```\s*", re.S)
"""The thought group is exactly the text before the fence, as the full parser cuts it."""

_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>|<\|START_THINKING\|>", re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>|<\|END_THINKING\|>", re.I)
_THINK_TAG = re.compile(r"</?(?:think|thinking|reasoning)>|<\|(?:START|END)_THINKING\|>", re.I)
_HARMONY_ANALYSIS = re.compile(r"<\|channel\|>\s*analysis\s*<\|message\|>(.*?)(?:<\|end\|>|(?=<\|start\|>)|$)", re.S)
_SPECIAL_TOKEN = re.compile(
    r"<\|(?:start|channel|from|recipient)\|>[ \t]*\w*|<\|[\w\-./ ]{1,40}\|>|<\uff5c[^\uff5c<>\n]{1,40}\uff5c>|</?s>"
    r"|<start_of_turn>[ \t]*\w*|<end_of_turn>"
)
_FUNCTIONARY_CONTENT = re.compile(r">>>all[ \t]*\n")
"""Functionary's `>>>all` recipient: what follows is the model's text, not a call."""
_LEADING_CONTENT = re.compile(r"\s*all[ \t]*\n")
"""The same recipient at the very start, where the generation prompt wrote the `>>>`."""
_MARKUP_TAG = re.compile(r"</?(?:tool_calls?|function_calls?|toolcall|tool_use)>", re.I)
# Possessive runs (`*+`) keep these linear on a model's reply: each run is followed by a character it cannot
# hold, so giving some back could never help, and `[ \t]*[ \t]*` would otherwise try every split of a long run.
_LINE_HEAD = r"^[ \t>*#_\-]*+"
_LABEL_END = r"(?:[ \t]*+\d{1,3})?[ \t]*+\**+[ \t]*+:"  # `Action 3:` (numbered ReAct), `**Action:**`
_ACTION_LINE = re.compile(_LINE_HEAD + r"Action(?![ \t_]*+Input)" + _LABEL_END + r"[ \t]*(?P<rest>[^\n]*)", re.M | re.I)
_ACTION_HEAD = re.compile(r"(?P<name>final[ \t_\-]*answer|[^\s\[({]+)[ \t]*(?P<tail>.*)", re.I | re.S)
_ACTION_INPUT = re.compile(
    r"\s*+[ \t>*#_\-]*+(?:Action[ \t_]*+(?:Input|Args)|Arguments|Args|Parameters|Input)" + _LABEL_END + r"[ \t]*\**",
    re.I,
)
_FINAL_ANSWER = re.compile(_LINE_HEAD + r"Final[ \t_\-]*+Answer" + _LABEL_END + r"[ \t]*\**", re.M | re.I)
_OBSERVATION = re.compile(_LINE_HEAD + r"Observation" + _LABEL_END, re.M | re.I)
_PROTOCOL_LABELS = r"Observation|Action(?:[ \t_]*+Input)?|Final[ \t_\-]*+Answer"
"""The ReAct labels that change what a reply asks for; a `Thought:` label only names the thought."""
_REACT_LABEL = re.compile(_LINE_HEAD + rf"(?:{_PROTOCOL_LABELS}|Thought)" + _LABEL_END, re.M | re.I)
_PROTOCOL_LABEL = re.compile(_LINE_HEAD + rf"(?:{_PROTOCOL_LABELS})" + _LABEL_END, re.M | re.I)
_THOUGHT_LABEL = re.compile(
    _LINE_HEAD + r"(?:Thought|Final[ \t_\-]*+Answer)" + _LABEL_END + r"[ \t]*\**[ \t]*", re.M | re.I
)
_DANGLING_LABEL = re.compile(
    r"[>*#_\-\s]*+(?:action|action[ _]?input|final[ _]?answer|tool[ _]?calls?|function[ _]?calls?|calls?|json|```[\w+.\-]*)[ \t*]*+:?[ \t*]*+",
    re.I,
)
_HTML_ESCAPED = re.compile(r"&(?:quot|lt|gt|#0*34|#x0*22);", re.I)
_FULL_WIDTH_BRACKETS = str.maketrans("｛｝［］", "{}[]")


class ParsedOutput(BaseModel):
    """What one model reply asked for: its reasoning, its calls in order, or why none could be read."""

    model_config = ConfigDict(frozen=True)

    thought: str
    calls: tuple[ToolCall, ...]
    problem: str = ""
    """When `calls` is empty: a short, model-facing reason; "" when the reply simply held no action."""


def parse_output(text: str) -> ParsedOutput:
    """Read the thought and the tool calls from a model's text reply. Never raises."""
    try:
        text = text if isinstance(text, str) else str(text)
        return _canonical(text) or _parse(text)
    except Exception:  # a parser bug must cost one format error, never the run
        return ParsedOutput(thought=text.strip() if isinstance(text, str) else "", calls=(), problem=UNREADABLE_PROBLEM)


def _canonical(text: str) -> ParsedOutput | None:
    """The fast path for the exact reply format the instructions ask for: plain prose, then one
    ```json {"action": ..., "args": {...}} ``` block; the prose may carry `Thought:` labels. Anything else goes to
    the full parser, which gives the same result for this form (a property test holds the two together)."""
    found = _CANONICAL.fullmatch(text)
    if found is None or _PROTOCOL_LABEL.search(found["thought"]):
        return None
    try:
        value = json.loads(found["body"])
    except ValueError:
        return None
    if not isinstance(value, dict) or value.keys() != {"action", "args"}:
        return None
    raw, args = value["action"], value["args"]
    if not isinstance(raw, str) or not isinstance(args, dict) or (name := normalize_tool_name(raw)) != raw or not args:
        return None
    # The remembered name, not the reply's copy of it: a run keeps its calls, each naming one of a few tools.
    return ParsedOutput(thought=_clean_thought(found["thought"]), calls=(make_call(name, args),))


def _parse(text: str) -> ParsedOutput:
    """The full parser. A reply without a call is read again as it was before a layer escaped it, if one did."""
    parsed = _read(text)
    if parsed.calls:
        return parsed
    for view in _unescaped_views(text):
        again = _read(view)
        if again.calls:
            return again
    return parsed


def _unescaped_views(text: str) -> Iterator[str]:
    """The reply with HTML entities undone (`{&quot;name&quot;: ...}`, `&lt;tool_call&gt;`), and with full-width
    brackets as ASCII (`｛“action”：...｝`), where it has them."""
    if _HTML_ESCAPED.search(text):
        yield html.unescape(text)
    if "｛" in text or "［" in text:
        yield text.translate(_FULL_WIDTH_BRACKETS)


def _read(text: str) -> ParsedOutput:
    outside, thinking = _split_reasoning(text)
    from_thinking = not _SPECIAL_TOKEN.sub("", outside).strip()
    body = thinking if from_thinking else outside  # reasoning is read for calls only when nothing else was said
    diagnosis = Diagnosis()
    calls, lead, carried = _resolve(body, _find_sites(body, diagnosis), diagnosis)
    thought = _clean_thought(body[:lead] if calls else body) or carried
    if not thought and not from_thinking:
        thought = _clean_thought(thinking)
    if not calls and not from_thinking and thinking.strip() and _find_sites(thinking, Diagnosis()):
        diagnosis.think_only = True
    return ParsedOutput(thought=thought, calls=tuple(calls), problem="" if calls else diagnosis.problem())


def _split_reasoning(text: str) -> tuple[str, str]:
    """The text outside reasoning blocks, and the reasoning: `<think>` pairs, an unclosed `<think>` (the rest is
    reasoning), a stray leading `</think>` (what precedes it is reasoning), a harmony analysis channel. Tags
    inside a JSON value (an answer that mentions `</think>`) are not tags."""
    thinking = [found.group(1) for found in _HARMONY_ANALYSIS.finditer(text)]
    if thinking:
        text = _HARMONY_ANALYSIS.sub("", text)
    if not _THINK_TAG.search(text):
        return text, "\n".join(thinking)
    json_spans = scan_spans(text).outermost()

    def find(pattern: re.Pattern[str], pos: int) -> re.Match[str] | None:
        while (found := pattern.search(text, pos)) is not None:
            enclosing = bisect.bisect_right(json_spans, (found.start(), len(text))) - 1
            if enclosing < 0 or json_spans[enclosing][1] <= found.start():
                return found
            pos = json_spans[enclosing][1]
        return None

    outside: list[str] = []
    pos = 0
    first_open, first_close = find(_THINK_OPEN, 0), find(_THINK_CLOSE, 0)
    if first_close and (not first_open or first_close.start() < first_open.start()):
        thinking.append(text[: first_close.start()])
        pos = first_close.end()
    while (opened := find(_THINK_OPEN, pos)) is not None:
        outside.append(text[pos : opened.start()])
        closed = find(_THINK_CLOSE, opened.end())
        if closed is None:
            thinking.append(text[opened.end() :])
            pos = len(text)
            break
        thinking.append(text[opened.end() : closed.start()])
        pos = closed.end()
    outside.append(text[pos:])
    return "".join(outside), "\n".join(thinking)


def _find_sites(body: str, diagnosis: Diagnosis) -> list[Site]:
    """Tool-call markup wins outright; else ReAct `Action:` lines and calls written as code on their own lines,
    plus fenced blocks, or bare JSON if no fence holds a call. A block a ReAct line consumed as its input, or
    JSON that is a code call's argument, is not read again."""
    markup = markup_sites(body, diagnosis)
    if markup:
        return markup
    react = _react_sites(body, diagnosis)
    scan = scan_spans(body)
    fences = find_fences(body, scan)
    fenced_ranges = [(fence.start, fence.end) for fence in fences]
    code = code_line_sites(body, blocked=[*((site.lead, site.end) for site in react), *fenced_ranges])
    claimed = [(site.lead, site.end) for site in (*react, *code)]
    fenced = [
        site
        for fence in fences
        if not overlaps(fence.start, fence.end, claimed)
        for site in _fenced_sites(body, fence, diagnosis)
    ]
    loose = fenced or json_sites(body, 0, diagnosis, blocked=[*claimed, *fenced_ranges], scan=scan)
    return sorted([*react, *code, *loose], key=lambda site: site.lead)


def _fenced_sites(body: str, fence: Fence, diagnosis: Diagnosis) -> list[Site]:
    """A fence of nothing but code calls is read as code; any other fence for the JSON (or tool code) in it."""
    return script_sites(body, fence) or fence_sites(body, fence, diagnosis)


def _resolve(body: str, sites: list[Site], diagnosis: Diagnosis) -> tuple[list[ToolCall], int, str]:
    """Order the found actions: the first of a Final Answer and an action wins, a hallucinated `Observation:`
    ends the reply, a block echoed verbatim counts once. Returns the calls, where the thought ends, and a
    thought carried inside the first call object."""
    final = _FINAL_ANSWER.search(body)
    if final and (not sites or (final.start() < sites[0].lead and not _answers_label(body, final, sites))):
        answer = body[final.end() :].strip()
        if answer:
            return [ToolCall(name=FINISH_TOOL, args={"answer": answer})], final.start(), ""
        diagnosis.empty_answer = True
        return [], 0, ""
    if final and final.start() > sites[0].lead:
        sites = [site for site in sites if site.lead < final.start()]
    if not sites:
        return [], 0, ""
    observation = _OBSERVATION.search(body, sites[0].end)
    if observation:
        sites = [site for site in sites if site.lead < observation.start()]
    calls: list[ToolCall] = []
    seen: set[str] = set()
    for site in sites:
        if site.raw not in seen:
            seen.add(site.raw)
            calls.extend(site.calls)
    return calls, sites[0].lead, sites[0].thought


def _answers_label(body: str, final: re.Match[str], sites: list[Site]) -> bool:
    """Whether the blocks after a `Final Answer:` label are the answer itself: they follow it directly (and are
    not code the answer shows), or they are all `finish` calls (a summary, then the finish block)."""
    directly = not body[final.end() : sites[0].lead].strip() and not sites[0].as_code
    return directly or all(call.name == FINISH_TOOL for site in sites for call in site.calls)


def _react_sites(body: str, diagnosis: Diagnosis) -> list[Site]:
    sites: list[Site] = []
    for line in islice(_ACTION_LINE.finditer(body), 64):
        if sites and line.start() < sites[-1].end:
            continue
        site = _react_site(body, line, diagnosis)
        if site:
            sites.append(site)
    return sites


def _react_site(body: str, line: re.Match[str], diagnosis: Diagnosis) -> Site | None:
    """One `Action: name` line with its `Action Input:`, or `Action: name[arg]`, `name(k=v)`, `name {...}`."""
    rest = line.group("rest").strip().lstrip("*").strip()
    if not rest or rest.startswith("```") or rest[0] in "{[<":  # the action is a block: the JSON readers take it
        return None
    head = _ACTION_HEAD.match(rest)
    name, tail = (normalize_tool_name(head.group("name")), head.group("tail").strip()) if head else ("", "")
    if not name or (tail and tail[0] not in "[({"):
        diagnosis.bad_action = True
        return None
    end = line.end()
    args: dict[str, Any] | None
    if not tail:
        args, end = _action_input(body, line.end(), diagnosis)
        if args is None:
            return None
    elif tail[0] == "[":
        args = decode_args(tail[1:].rstrip().removesuffix("]").strip())
    elif tail[0] == "(":
        calls = calls_from_python(f"_{tail}")
        written_as_js = None if calls else js_arguments(tail)
        args = calls[0].args if calls else {"_raw": tail} if written_as_js is None else written_as_js
    else:
        tail_start = line.start("rest") + line.group("rest").rindex(tail)
        closing = match_closing(body, tail_start)
        if closing is None:
            diagnosis.truncated = True
            return None
        end = closing
        args = decode_args(body[tail_start:end])
    return Site(line.start(), end, (make_call(name, args),), body[line.start() : end].strip())


def _action_input(body: str, pos: int, diagnosis: Diagnosis) -> tuple[dict[str, Any] | None, int]:
    """The arguments after an `Action:` line, and where they end: `Action Input:` JSON, a Python dict, fenced
    JSON or bare text. Without the label, a JSON block right after the line is its input, unless that block is a
    whole call itself: then None, and the JSON readers take it. None also when the JSON is cut off."""
    label = _ACTION_INPUT.match(body, pos)
    start, fenced = block_start(body, label.end() if label else pos)
    opens_json = start < len(body) and body[start] in "{["
    if not label and not opens_json:
        return {}, pos
    if opens_json:
        closing = match_closing(body, start)
        if closing is None:
            diagnosis.truncated = True
            return None, len(body)
        try:
            value = load_lenient(body[start:closing])
        except LenientJSONError:
            if not label:
                return {}, pos
            # not JSON after all (a LogQL selector, say): read it as text below
        else:
            if not label and calls_from_value(value, explicit=False):
                return None, pos
            fence_end = body.find("```", closing) if fenced else -1
            return decode_args(value), closing if fence_end < 0 else fence_end + 3
    stop = _REACT_LABEL.search(body, start)
    text_end = stop.start() if stop else len(body)
    text = body[start:text_end].strip().removesuffix("```").strip()
    return (decode_args(text) if text else {}), text_end


def _clean_thought(text: str) -> str:
    """Reasoning text without `Thought:` labels, special tokens, or a dangling `Action:` before the block."""
    if "<" in text:  # every special token and tag starts with one: most thoughts skip these scans
        for noise in (_SPECIAL_TOKEN, _MARKUP_TAG, _THINK_TAG):
            text = noise.sub("", text)
    text = _THOUGHT_LABEL.sub("", text)
    if ">" in text:
        text = _FUNCTIONARY_CONTENT.sub("", text)
    leading = _LEADING_CONTENT.match(text)
    text = text[leading.end() :] if leading else text
    lines = text.strip().split("\n")
    while lines and (not lines[-1].strip() or _DANGLING_LABEL.fullmatch(lines[-1])):
        lines.pop()
    return "\n".join(lines).strip()
