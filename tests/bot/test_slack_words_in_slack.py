"""Slack's markup is made in `bot/slack/` only: the other rooms hand it facts (who, when, which refusal, which
alerts), and no string they build holds a mention, a user group, a channel link, a date or a broadcast of Slack's,
and none of them builds Block Kit: no block, element or text object of their own, and none of `bot/slack/`'s
builders or mrkdwn formatters in their hands."""

from __future__ import annotations

import ast
import re
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"
SLACK_PARTS = ("bot.slack.blocks", "bot.slack.mrkdwn")
"""Where Block Kit's blocks and mrkdwn's formatting are built."""
FINISHED_OR_READING = frozenset({"Message", "ephemeral", "without_mentions", "looks_like_address"})
"""What other rooms may take from `SLACK_PARTS`: a message's type, a finished reply of trusted words, and two
readers of text (a mention stripped from a person's words, a label that looks like an address)."""
BLOCK_KIT_TYPES = frozenset(
    {"header", "section", "context", "actions", "divider", "image", "input", "rich_text", "file", "video"}
    | {"plain_text", "mrkdwn", "button", "overflow", "static_select", "checkboxes", "radio_buttons", "datepicker"}
    | {"plain_text_input", "modal", "home", "rich_text_section", "rich_text_list", "rich_text_preformatted"}
)
"""The `type` of Slack's blocks, block elements, text objects and views."""
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


def block_kit_in(tree: ast.AST) -> list[ast.AST]:
    """Block Kit built in a module: a dict literal whose `"type"` is one of Slack's (`BLOCK_KIT_TYPES`), and an
    import from `SLACK_PARTS` of anything but `FINISHED_OR_READING` (the whole module, or a builder or formatter)."""
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        match node:
            case ast.Dict():
                typed = (v for k, v in zip(node.keys, node.values, strict=True) if _constant(k) == "type")
                found += [node for value in typed if _constant(value) in BLOCK_KIT_TYPES]
            case ast.ImportFrom(module=module) if module in SLACK_PARTS:
                found += [node for alias in node.names if alias.name not in FINISHED_OR_READING]
            case ast.ImportFrom(module="bot.slack"):
                found += [node for alias in node.names if f"bot.slack.{alias.name}" in SLACK_PARTS]
            case ast.Import():
                found += [node for alias in node.names if alias.name in SLACK_PARTS]
    return found


def _constant(node: ast.AST | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def outside_slack() -> list[tuple[Path, ast.AST]]:
    """Every module of `bot/` but `bot/slack/`'s, parsed."""
    paths = [path for path in sorted(BOT.rglob("*.py")) if path.relative_to(BOT).parts[0] != "slack"]
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in paths]


def test_no_room_but_slack_builds_block_kit():
    found = [f"{path.relative_to(BOT.parent)}:{n.lineno}" for path, tree in outside_slack() for n in block_kit_in(tree)]
    assert found == []


def test_the_guard_sees_block_kit_dicts_and_slack_builders_but_not_finished_messages_or_other_dicts():
    source = """from bot.slack.blocks import Message, ephemeral, section_blocks
from bot.slack.mrkdwn import clip_literal, without_mentions
from bot.slack import mrkdwn
import bot.slack.blocks
from bot.slack.outbox import Outbox

header = {"type": "header", "text": {"type": "plain_text", "text": "t"}}
schema = {"type": "object", "properties": {"ready": {"type": "boolean"}}}
scope = {"type": "http", "body": b""}
"""
    found = block_kit_in(ast.parse(source))
    assert sorted((n.lineno, type(n).__name__) for n in found) == [
        (1, "ImportFrom"),
        (2, "ImportFrom"),
        (3, "ImportFrom"),
        (4, "Import"),
        (7, "Dict"),
        (7, "Dict"),
    ]


def test_no_room_but_slack_builds_slack_markup():
    found = [
        f"{path.relative_to(BOT.parent)}:{n.lineno}: {n.value[:60]!r}"
        for path, tree in outside_slack()
        for n in markup_in(tree)
    ]
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
