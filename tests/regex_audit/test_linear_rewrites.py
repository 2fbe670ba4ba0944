"""The regexes rewritten to run in linear time (issue 19's audit) give what the backtracking ones gave, on every
text: each old pattern is kept here as the reference and compared on generated texts made of the pieces that
matter to it; and each rewrite reads a hostile 10,000-character text (what took seconds to minutes before) to
the expected result. No time is measured: bench suite x does that."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.eval.export import _DISTINCTIVE
from bot.slack.mrkdwn import looks_like_address
from kernel.answer.citations import _PARENTHESISED, without_trailing_citation
from kernel.answer.prose_findings import _LABEL, _top_level_parts
from kernel.parsing import reply as parsing
from kernel.parsing.call_shapes import strip_fence
from kernel.parsing.lenient_json import _as_strict_json, _tokens
from opsagent_tools.logs.records import structured_fields
from opsagent_tools.repos.headline import setting_changes

N = 10_000


def texts(*pieces: str, size: int = 16) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=size).map("".join)


def spans(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text)]


_LINE_HEAD, _LABEL_END = r"^[ \t>*#_\-]*", r"(?:[ \t]*\d{1,3})?[ \t]*\**[ \t]*:"
OLD_PARSING = {
    "_ACTION_LINE": re.compile(
        _LINE_HEAD + r"Action(?![ \t_]*Input)" + _LABEL_END + r"[ \t]*(?P<rest>[^\n]*)", re.M | re.I
    ),
    "_OBSERVATION": re.compile(_LINE_HEAD + r"Observation" + _LABEL_END, re.M | re.I),
    "_REACT_LABEL": re.compile(
        _LINE_HEAD + r"(?:Observation|Action(?:[ \t_]*Input)?|Final[ \t_\-]*Answer|Thought)" + _LABEL_END, re.M | re.I
    ),
    "_THOUGHT_LABEL": re.compile(
        _LINE_HEAD + r"(?:Thought|Final[ \t_\-]*Answer)" + _LABEL_END + r"[ \t]*\**[ \t]*", re.M | re.I
    ),
}
OLD_ACTION_INPUT = re.compile(
    r"\s*[ \t>*#_\-]*(?:Action[ \t_]*(?:Input|Args)|Arguments|Args|Parameters|Input)" + _LABEL_END + r"[ \t]*\**", re.I
)
OLD_DANGLING = re.compile(
    r"[>*#_\-\s]*(?:action|action[ _]?input|final[ _]?answer|tool[ _]?calls?|function[ _]?calls?|calls?|json"
    r"|```[\w+.\-]*)[ \t*]*:?[ \t*]*",
    re.I,
)
REACT = texts(" ", "\t", "\n", "*", "#", ">", "-", "_", ":", "1", "1234", "Action", "Input", "Final", "Answer",
              "Observation", "Thought", "Args", "action", "json", "```py", "x")  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(REACT)
def test_react_labels_read_as_before(text):
    for name, old in OLD_PARSING.items():
        assert spans(getattr(parsing, name), text) == spans(old, text), name
    new_input, old_input = parsing._ACTION_INPUT.match(text), OLD_ACTION_INPUT.match(text)
    assert (new_input and new_input.span()) == (old_input and old_input.span())
    assert bool(parsing._DANGLING_LABEL.fullmatch(text)) == bool(OLD_DANGLING.fullmatch(text))


def test_react_labels_read_a_hostile_reply():
    assert parsing._OBSERVATION.search("Observation" + "\t" * N + " ") is None
    assert parsing._ACTION_INPUT.match(" " * N + "x") is None
    assert parsing._DANGLING_LABEL.fullmatch("action" + "*" * N + ">") is None
    assert parsing._DANGLING_LABEL.fullmatch("action" + " *" * N + ":")


OLD_LABEL_TAIL = r"\s*(?:\([^)]{0,40}\))?\s*(?:[:：]|\s[-–—]\s|$)\s*(?P<rest>.*)$"
OLD_LABEL = re.compile(_LABEL.pattern[: _LABEL.pattern.index(r"\s*+")] + OLD_LABEL_TAIL, re.I)


@settings(max_examples=600, deadline=None)
@given(texts("Summary", "Root cause", "Next steps", " ", "\t", "\n", "(", ")", "likely", ":", "：", "-", "—", "x."))
def test_label_lines_and_semicolon_lists_read_as_before(text):
    new, old = _LABEL.match(text), OLD_LABEL.match(text)
    assert (new and (new.span(), new.groupdict())) == (old and (old.span(), old.groupdict()))
    mixed = text.replace("x.", ";")
    assert _top_level_parts(mixed) == re.split(r";(?![^()]*\))", mixed)


def test_label_lines_and_semicolon_lists_read_hostile_text():
    assert _LABEL.match("summary" + " " * N + "\x00") is None
    assert _top_level_parts("; " * (N // 2) + "(a; b)") == ["", *[" "] * (N // 2 - 1), " (a; b)"]


OLD_PARENTHESISED = re.compile(r"\s*[(\[]\s*(?:see\s+)?steps?\s*#?\d[^()\[\]]{0,80}[)\]]\s*$", re.IGNORECASE)


@settings(max_examples=600, deadline=None)
@given(texts(" ", "\n", "(", "[", ")", "]", "see", "step", "s", "3", "#", "x", "."))
def test_trailing_citations_and_fences_are_cut_as_before(text):
    assert _PARENTHESISED.sub("", text) == OLD_PARENTHESISED.sub("", text)
    fenced = text.replace("s", "`").replace("(", "```")
    assert strip_fence(fenced) == re.sub(r"^\s*```[\w+.\-]*[ \t]*\n?|\n?[ \t]*```\s*$", "", fenced)


def test_citations_and_fences_read_hostile_text():
    assert without_trailing_citation(" " * N + "step (see step 3).") == " " * N + "step."
    assert without_trailing_citation(" " * N + "steps x") == " " * N + "steps x"
    assert strip_fence("```json\n{}" + "\t" * N + "x") == "{}" + "\t" * N + "x"


OLD_TOKEN_KINDS = texts('"', "'", "\\", "“", "”", "„", "＂", "‘", "’", "/*", "*/", "//", "\n", " ", "{", "}", ":", "a")


@settings(max_examples=800, deadline=None)
@given(OLD_TOKEN_KINDS)
def test_json_repair_tokens_are_those_of_the_token_regex(text):
    from kernel.parsing.lenient_json import _TOKEN

    assert list(_tokens(text)) == [(m.lastgroup, m.group()) for m in _TOKEN.finditer(text)]


def test_json_repair_reads_a_text_of_unclosed_quotes():
    unclosed = '{"key": "' + '\\"' * (N // 2)  # every later quote escaped: the string never closes
    assert _as_strict_json(unclosed) == unclosed
    assert _as_strict_json(unclosed, close_open=True) is None, "the text ends inside a string"
    assert _as_strict_json("“a" * 3 + "\\＂" * (N // 2)) == '"a""a"“"a"' + "\\＂" * (N // 2)


OLD_SETTING = re.compile(r"""^\s*(?:-\s+)?["']?(?P<key>[A-Za-z_][\w.\-]*)["']?\s*[:=]\s*(?P<value>.*?)\s*,?\s*$""")


@settings(max_examples=600, deadline=None)
@given(texts("\n-", "\n+", "\n ", "key", ": ", "=", " ", "\t", ",", "1", " # c", "'v'", "-"))
def test_setting_changes_read_as_before(patch):
    assert setting_changes(patch) == _old_setting_changes(patch)


def _old_setting_changes(patch: str) -> list[tuple[str, str, str]]:
    def value(match: re.Match[str]) -> str:
        text = match["value"]
        return text if text.startswith(("'", '"')) else re.sub(r"\s+#.*$", "", text)

    found, removed = [], {}
    for line in [*patch.splitlines(), " "]:
        setting = OLD_SETTING.match(line[1:])
        if line.startswith("-") and not line.startswith("---"):
            if setting is not None:
                removed.setdefault(setting["key"], value(setting))
        elif line.startswith("+") and not line.startswith("+++"):
            if setting is not None and removed.get(setting["key"], value(setting)) != value(setting):
                found.append((setting["key"], removed.pop(setting["key"]), value(setting)))
        elif not line.startswith("\\"):
            removed = {}
    return found


def test_settings_and_logfmt_read_hostile_lines():
    assert setting_changes("-a=b" + " a=b" * (N // 4) + " " * N + "\x00\n+a=c") == [
        ("a", "b" + " a=b" * (N // 4) + " " * N + "\x00", "c")
    ]
    assert structured_fields("_" * N) is None
    assert structured_fields("level=error " + "_" * N + "=x msg=hi") == {"level": "error", "_" * N: "x", "msg": "hi"}


@settings(max_examples=800, deadline=None)
@given(texts("a", "1", ":", "/", ".", "-", "+", "@", "www", " ", "f", "é", "_", "K", "http"))
def test_addresses_and_distinctive_terms_are_found_as_before(text):
    old_address = (
        r"[a-z][a-z0-9+.\-]*:/|[\w\-]+(?:\.[\w\-]+)+|\bwww\b|\blocalhost\b|@[\w\-]|[0-9a-f]*(?::[0-9a-f]*){2,}"
    )
    assert looks_like_address(text) == bool(re.search(old_address, text, re.I))
    old_term = r"`([^`\n]{2,60})`|\b(?=[\w.-]*\d|[\w.]*[-_][\w.])[A-Za-z][\w.-]*[\w]\b"
    assert spans(_DISTINCTIVE, text) == spans(re.compile(old_term), text), "names of 60 characters at most"


def test_addresses_and_terms_in_hostile_text():
    assert not looks_like_address("a" * N)
    assert looks_like_address("a" * N + ".b")
    assert [m.group() for m in _DISTINCTIVE.finditer(".z" * (N // 2) + " v2.14.0")] == ["v2.14.0"]
