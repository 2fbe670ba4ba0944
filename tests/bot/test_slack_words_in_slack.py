"""Slack's markup is made in `bot/slack/` only: the other rooms hand it facts (who, when, which refusal), and no
string they build holds a mention, a user group, a channel link, a date or a broadcast of Slack's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"
SLACK_MARKUP = re.compile(r"<[@#]|<!(?:date|subteam|here|channel|everyone)\b")
"""`<@U…>`, `<#C…>`, `<!date^…>`, `<!subteam^…>`, `<!here>`, `<!channel>`, `<!everyone>`: also as the start of an
f-string's literal part (`f"<@{user}>"`)."""


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings, of a module, class or function or of an attribute or
    constant (the string after its assignment): a word about markup is no markup."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for before, statement in zip([None, *body], body, strict=False):
            documents = before is None or isinstance(before, ast.Assign | ast.AnnAssign)
            if documents and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                found.add(id(statement.value))
    return found


def markup_in(tree: ast.AST) -> list[ast.Constant]:
    """The string constants (f-strings' literal parts too) that hold Slack markup, docstrings aside."""
    skip = docstrings(tree)
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and SLACK_MARKUP.search(node.value)
    ]


def test_no_room_but_slack_builds_slack_markup():
    found = []
    for path in sorted(BOT.rglob("*.py")):
        if path.relative_to(BOT).parts[0] != "slack":
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found += [f"{path.relative_to(BOT.parent)}:{n.lineno}: {n.value[:60]!r}" for n in markup_in(tree)]
    assert found == []


def test_the_guard_sees_markup_in_plain_strings_and_f_strings_but_not_in_docstrings():
    source = '''"""A module about `<@U1>`."""
x = f"⏹ <@{by}> stopped"
"""About `<!channel>`."""
y = ["at <!date^1^{time}|t>", "<#C1>", "<!doctype html>", "a < b"]


def f():
    """Says `<!here>`."""
    return "<!subteam^S1>"
'''
    assert [n.value for n in markup_in(ast.parse(source))] == [
        "⏹ <@",
        "at <!date^1^{time}|t>",
        "<#C1>",
        "<!subteam^S1>",
    ]
