"""A Slack thread as an HTML page, from the messages the bot posted (Slack's own message JSON, Block Kit included).

It renders what a reader would see in Slack's thread pane: header, section (text, fields, accessory), context,
actions (buttons), context actions (feedback buttons), divider and image blocks, mrkdwn (bold, italic, strike, code, fences, quotes, links, mentions,
dates, emoji shortcodes), files and reactions, consecutive messages of one author grouped. Used for the README's
picture (`python -m bench.thread_picture`) and to measure how tall a thread is; anything it cannot render is
shown as such, never silently left out.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

GROUP_S = 300
"""Slack shows a message without avatar and name when the same author posted the one before within 5 minutes."""
EMOJI = {
    "eyes": "👀", "white_check_mark": "✅", "x": "❌", "heavy_check_mark": "✔️", "warning": "⚠️",
    "rotating_light": "🚨", "fire": "🔥", "mag": "🔍", "mag_right": "🔎", "lock": "🔒", "closed_lock_with_key": "🔐",
    "hourglass": "⌛", "hourglass_flowing_sand": "⏳", "stopwatch": "⏱️", "scissors": "✂️", "recycle": "♻️",
    "double_vertical_bar": "⏸️", "black_square_for_stop": "⏹️", "arrow_right": "➡️", "rocket": "🚀",
    "tada": "🎉", "thumbsup": "👍", "+1": "👍", "thumbsdown": "👎", "-1": "👎", "raised_hands": "🙌",
    "pray": "🙏", "bulb": "💡", "memo": "📝", "page_facing_up": "📄", "bar_chart": "📊",
    "chart_with_upwards_trend": "📈", "chart_with_downwards_trend": "📉", "information_source": "ℹ️",
    "question": "❓", "exclamation": "❗", "red_circle": "🔴", "large_green_circle": "🟢", "robot_face": "🤖",
    "wrench": "🔧", "hammer_and_wrench": "🛠️", "gear": "⚙️", "link": "🔗", "point_right": "👉", "wave": "👋",
    "white_circle": "⚪", "large_yellow_circle": "🟡", "no_entry": "⛔", "sos": "🆘", "zap": "⚡",
}  # fmt: skip
"""Shortcodes as Slack shows them; an unknown one stays as typed, as Slack does."""
_FENCE = re.compile(r"```(.*?)```", re.DOTALL)
_TOKEN = re.compile(r"<([^<>\n]{1,3000})>")
_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_ITALIC = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_STRIKE = re.compile(r"(?<![\w~])~(?=\S)([^~\n]+?)(?<=\S)~(?![\w~])")
_SHORTCODE = re.compile(r":([a-z0-9_+-]{1,60}):")
_HOLE = re.compile("\x00(\\d+)\x00")


@dataclass(frozen=True)
class Author:
    """Who a message is from, as the thread shows them."""

    name: str
    is_bot: bool = False
    colour: str = "#4a154b"


@dataclass
class Directory:
    """Names for user ids (mentions and authors) and the bot's own name."""

    users: Mapping[str, str] = field(default_factory=dict)
    bot_name: str = "OpsAgent"
    channel: str = "incidents"

    def author(self, message: Mapping[str, Any]) -> Author:
        if message.get("bot_id"):
            return Author(self.bot_name, is_bot=True, colour="#1264a3")
        user = str(message.get("user", ""))
        palette = ("#e01e5a", "#2eb67d", "#ecb22e", "#36c5f0", "#4a154b")
        return Author(self.users.get(user, user or "someone"), colour=palette[sum(map(ord, user)) % len(palette)])


def render_thread(
    messages: Sequence[Mapping[str, Any]],
    directory: Directory,
    *,
    reactions: Mapping[str, Sequence[str]] | None = None,
    width_px: int = 760,
) -> str:
    """The thread as one HTML page: the first message is the parent, the rest its replies. `messages` are
    Slack message objects (`text`, `blocks`, `user`/`bot_id`, `ts`, `files`, `edited`); `reactions` by ts."""
    reactions = reactions or {}
    parts: list[str] = []
    previous: tuple[str, float] | None = None
    for number, message in enumerate(messages):
        author = directory.author(message)
        ts = float(message.get("ts", "0"))
        grouped = previous is not None and previous[0] == author.name and ts - previous[1] < GROUP_S and number != 1
        parts.append(render_message(message, author, directory, reactions.get(str(message.get("ts")), ()), grouped))
        if number == 0 and len(messages) > 1:
            count = len(messages) - 1
            parts.append(f'<div class="replies"><span>{count} repl{"y" if count == 1 else "ies"}</span></div>')
        previous = (author.name, ts)
    title = f'<header><b>Thread</b> <span class="channel"># {html.escape(directory.channel)}</span></header>'
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><style>{CSS.replace("{width}", str(width_px))}</style></head>'
        f'<body><main class="thread">{title}{"".join(parts)}</main></body></html>'
    )


def render_message(
    message: Mapping[str, Any], author: Author, directory: Directory, reactions: Sequence[str], grouped: bool
) -> str:
    """One message: avatar, name and time unless `grouped`, then its blocks (or text), files and reactions."""
    ts = str(message.get("ts", "0"))
    when = datetime.fromtimestamp(float(ts), UTC).strftime("%H:%M")
    blocks = message.get("blocks") or []
    body = "".join(render_block(block, directory) for block in blocks) if blocks else _mrkdwn_div(message, directory)
    body += "".join(_file(file) for file in message.get("files") or [])
    if message.get("edited") and not author.is_bot:  # an app's chat.update shows no "(edited)"
        body += '<span class="edited">(edited)</span>'
    if reactions:
        counts: dict[str, int] = {}
        for name in reactions:
            counts[name] = counts.get(name, 0) + 1
        pills = "".join(
            f'<span class="reaction">{_emoji(name)} <small>{count}</small></span>' for name, count in counts.items()
        )
        body += f'<div class="reactions">{pills}</div>'
    if grouped:
        return f'<div class="message grouped" data-ts="{html.escape(ts)}"><div class="gutter">{when}</div><div class="content">{body}</div></div>'
    initials = html.escape("".join(word[0] for word in author.name.split() if word[0].isalpha())[:2].upper() or "?")
    badge = '<span class="app">APP</span>' if author.is_bot else ""
    head = f'<div class="head"><b>{html.escape(author.name)}</b>{badge}<time>{when}</time></div>'
    avatar = f'<div class="avatar" style="background:{author.colour}">{initials}</div>'
    return f'<div class="message" data-ts="{html.escape(ts)}">{avatar}<div class="content">{head}{body}</div></div>'


def render_block(block: Mapping[str, Any], directory: Directory) -> str:
    """One Block Kit block as Slack lays it out."""
    match block.get("type"):
        case "header":
            return f'<div class="block header">{_text(block.get("text"), directory)}</div>'
        case "section":
            inner = f'<div class="text">{_text(block["text"], directory)}</div>' if block.get("text") else ""
            if block.get("fields"):
                fields = "".join(f"<div>{_text(f, directory)}</div>" for f in block["fields"])
                inner += f'<div class="fields">{fields}</div>'
            accessory = block.get("accessory")
            side = f'<div class="accessory">{_element(accessory, directory)}</div>' if accessory else ""
            return f'<div class="block section"><div class="main">{inner}</div>{side}</div>'
        case "context":
            elements = "".join(f"<span>{_element(e, directory)}</span>" for e in block.get("elements", []))
            return f'<div class="block context">{elements}</div>'
        case "actions":
            elements = "".join(_element(e, directory) for e in block.get("elements", []))
            return f'<div class="block actions">{elements}</div>'
        case "context_actions":
            elements = "".join(_element(e, directory) for e in block.get("elements", []))
            return f'<div class="block context-actions">{elements}</div>'
        case "divider":
            return '<hr class="block divider">'
        case "image":
            alt = html.escape(str(block.get("alt_text", "image")))
            return f'<div class="block image">🖼 {alt}</div>'
        case "markdown":
            return f'<div class="block text">{mrkdwn_to_html(str(block.get("text", "")), directory)}</div>'
        case other:
            return f'<div class="block unsupported">[a {html.escape(str(other))} block: not rendered here]</div>'


def _element(element: Mapping[str, Any], directory: Directory) -> str:
    match element.get("type"):
        case "button":
            style = element.get("style", "default")
            label = _text(element.get("text"), directory)
            return f'<span class="button {html.escape(str(style))}">{label}</span>'
        case "feedback_buttons":
            thumbs = (element.get("positive_button", {}), element.get("negative_button", {}))
            return "".join(f'<span class="icon-button">{_text(b.get("text"), directory)}</span>' for b in thumbs)
        case "mrkdwn" | "plain_text":
            return _text(element, directory)
        case "image":
            return f'<span class="thumb" title="{html.escape(str(element.get("alt_text", "")))}">🖼</span>'
        case other:
            return f'<span class="unsupported">[{html.escape(str(other))}]</span>'


def _text(text: Any, directory: Directory) -> str:
    """A text object: mrkdwn rendered, plain_text escaped (with its shortcodes as emoji when `emoji` is on)."""
    if not isinstance(text, Mapping):
        return ""
    value = str(text.get("text", ""))
    if text.get("type") == "mrkdwn":
        return mrkdwn_to_html(value, directory)
    shown = html.escape(value).replace("\n", "<br>")
    return _SHORTCODE.sub(lambda m: _emoji(m.group(1)), shown) if text.get("emoji", True) else shown


def _mrkdwn_div(message: Mapping[str, Any], directory: Directory) -> str:
    return f'<div class="block text">{mrkdwn_to_html(str(message.get("text", "")), directory)}</div>'


def mrkdwn_to_html(text: str, directory: Directory) -> str:
    """Slack mrkdwn as HTML: ```fences```, `code`, *bold*, _italic_, ~strike~, > quotes, <url|label>, <@U…>,
    <#C…|name>, <!here>, <!date^…|fallback>, :shortcodes:. Slack's own escapes (&amp; &lt; &gt;) stay literal text."""
    out: list[str] = []
    last = 0
    for fence in _FENCE.finditer(text):
        out.append(_lines(text[last : fence.start()], directory))
        out.append(f"<pre>{html.escape(_unescape(fence.group(1).strip(chr(10))))}</pre>")
        last = fence.end()
    out.append(_lines(text[last:], directory))
    return "".join(out)


def _lines(text: str, directory: Directory) -> str:
    """Text outside fences: quoted lines grouped into one quote, the rest inline, lines broken as typed."""
    if not text.strip("\n"):
        return ""
    rendered: list[str] = []
    quote: list[str] = []
    for line in text.strip("\n").split("\n"):
        if line.startswith(">") and not line.startswith("&gt;"):
            quote.append(_inline(line[1:].removeprefix(" "), directory))
            continue
        if quote:
            rendered.append(f"<blockquote>{'<br>'.join(quote)}</blockquote>")
            quote = []
        rendered.append(_inline(line, directory) + "<br>")
    if quote:
        rendered.append(f"<blockquote>{'<br>'.join(quote)}</blockquote>")
    return "".join(rendered).removesuffix("<br>")


def _inline(line: str, directory: Directory) -> str:
    holes: list[str] = []

    def hole(markup: str) -> str:
        holes.append(markup)
        return f"\x00{len(holes) - 1}\x00"

    line = _CODE.sub(lambda m: hole(f"<code>{html.escape(_unescape(m.group(1)))}</code>"), line)
    line = _TOKEN.sub(lambda m: hole(_token(m.group(1), directory)), line)
    shown = html.escape(_unescape(line))
    shown = _BOLD.sub(r"<b>\1</b>", shown)
    shown = _ITALIC.sub(r"<i>\1</i>", shown)
    shown = _STRIKE.sub(r"<s>\1</s>", shown)
    shown = _SHORTCODE.sub(lambda m: _emoji(m.group(1)), shown)
    return _HOLE.sub(lambda m: holes[int(m.group(1))], shown)


def _token(body: str, directory: Directory) -> str:
    """What `<…>` shows: a mention, a channel, a special mention, a date's fallback, or a link."""
    target, _, label = body.partition("|")
    if target.startswith("@"):
        name = directory.users.get(target[1:], target[1:])
        return f'<span class="mention">@{html.escape(name)}</span>'
    if target.startswith("#"):
        return f'<span class="mention">#{html.escape(label or target[1:])}</span>'
    if target.startswith("!date^"):
        return html.escape(_unescape(label or target))
    if target.startswith("!"):
        return f'<span class="mention">@{html.escape(target[1:].split("^")[0])}</span>'
    shown = html.escape(_unescape(label or target))
    return f'<a href="{html.escape(_unescape(target), quote=True)}">{shown}</a>'


def _file(file: Mapping[str, Any]) -> str:
    name = html.escape(str(file.get("title") or file.get("name") or "file"))
    kind = html.escape(str(file.get("pretty_type") or file.get("filetype") or "File").upper())
    return f'<div class="file"><span class="icon">📄</span><div><b>{name}</b><small>{kind}</small></div></div>'


def _emoji(name: str) -> str:
    return EMOJI.get(name, f":{html.escape(name)}:")


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


CSS = """
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: #1d1c1d; font: 15px/1.46668 Lato, "Noto Sans", "DejaVu Sans", sans-serif;
       -webkit-font-smoothing: antialiased; }
.thread { width: {width}px; padding: 0 0 16px; }
header { padding: 12px 20px; border-bottom: 1px solid #e2e2e2; font-size: 18px; }
header .channel { color: #616061; font-size: 13px; margin-left: 6px; }
.message { display: flex; padding: 8px 20px 4px; }
.message.grouped { padding-top: 2px; }
.avatar { flex: 0 0 36px; height: 36px; border-radius: 6px; color: #fff; font-weight: 900; font-size: 14px;
          display: flex; align-items: center; justify-content: center; margin-right: 8px; }
.gutter { flex: 0 0 36px; margin-right: 8px; color: transparent; font-size: 12px; text-align: right; }
.content { flex: 1; min-width: 0; }
.head b { font-weight: 900; }
.head .app { background: rgba(29,28,29,.13); color: rgba(29,28,29,.7); font-size: 10px; font-weight: 700;
             padding: 1px 3px; border-radius: 2px; margin-left: 4px; vertical-align: 1px; }
.head time { color: #616061; font-size: 12px; margin-left: 8px; }
.block { margin: 2px 0 4px; overflow-wrap: anywhere; }
.block.header { font-size: 18px; font-weight: 900; line-height: 1.33; margin: 4px 0 6px; }
.block.section { display: flex; gap: 12px; }
.block.section .main { flex: 1; min-width: 0; }
.fields { display: grid; grid-template-columns: 1fr 1fr; gap: 4px 16px; margin-top: 4px; }
.block.context { color: #616061; font-size: 12px; line-height: 1.5; }
.block.context span + span::before { content: ""; margin-left: 8px; }
.block.actions { display: flex; gap: 8px; flex-wrap: wrap; margin: 8px 0; }
.button { display: inline-flex; align-items: center; height: 28px; padding: 0 12px; border-radius: 4px;
          font-size: 13px; font-weight: 700; border: 1px solid rgba(29,28,29,.3); background: #fff; }
.button.primary { background: #007a5a; border-color: #007a5a; color: #fff; }
.button.danger { color: #e01e5a; border-color: rgba(224,30,90,.5); }
.block.context-actions { display: flex; gap: 4px; margin: 4px 0; }
.icon-button { display: inline-flex; align-items: center; height: 24px; padding: 0 6px; border-radius: 4px;
               font-size: 13px; border: 1px solid rgba(29,28,29,.13); background: #fff; }
.divider { border: 0; border-top: 1px solid #ddd; margin: 8px 0; }
code { font: 12px/1.5 Monaco, Menlo, "DejaVu Sans Mono", monospace; color: #e01e5a; background: rgba(29,28,29,.04);
       border: 1px solid rgba(29,28,29,.13); border-radius: 3px; padding: 1px 3px; }
pre { font: 12px/1.5 Monaco, Menlo, "DejaVu Sans Mono", monospace; background: rgba(29,28,29,.04);
      border: 1px solid rgba(29,28,29,.13); border-radius: 4px; padding: 8px; margin: 4px 0;
      white-space: pre-wrap; overflow-wrap: anywhere; }
blockquote { margin: 4px 0; padding-left: 12px; border-left: 4px solid #ddd; }
a { color: #1264a3; text-decoration: none; }
.mention { color: #1264a3; background: rgba(29,155,209,.1); border-radius: 3px; padding: 0 2px; font-weight: 700; }
.file { display: inline-flex; gap: 10px; align-items: center; border: 1px solid rgba(29,28,29,.13);
        border-radius: 8px; padding: 8px 12px; margin: 4px 0; min-width: 260px; }
.file .icon { font-size: 26px; }
.file small { display: block; color: #616061; font-size: 12px; }
.reactions { display: flex; gap: 4px; margin: 4px 0; }
.reaction { border: 1px solid rgba(29,28,29,.13); background: #f8f8f8; border-radius: 12px; padding: 0 7px;
            font-size: 13px; line-height: 22px; }
.reaction small { font-size: 11px; color: #1d1c1d; }
.replies { display: flex; align-items: center; gap: 8px; padding: 8px 20px; color: #616061; font-size: 13px; }
.replies::after { content: ""; flex: 1; border-top: 1px solid #e2e2e2; }
.edited { color: #616061; font-size: 12px; }
.unsupported { color: #b00; font-style: italic; }
"""
