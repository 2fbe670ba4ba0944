"""Slack mrkdwn from untrusted text: escaping, Markdown conversion, code fences and size-safe splitting.

Model, tool and user text reaches Slack through these functions, so a log line cannot ping or forge a link.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import quote

from bot.access.askers import api_client_of

FENCE = "```"
BACKTICK_STANDIN = "ˋ"
"""U+02CB, shown for a backtick inside code: a real one could close the fence early."""

_FENCE_LINE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
# Spans are bounded so that adversarial lines (many openers, no closer) stay linear rather than quadratic.
_INLINE = re.compile(
    r"(?P<code>(?P<ticks>`{1,3})(?P<body>[^`].{0,999}?)(?P=ticks)(?!`))"
    r"|\[(?P<label>[^\[\]\n]{1,500})\]\((?P<url>(?:[^()\s]|\([^()\s]{0,200}\)){1,2000})(?:\s+\"[^\"\n]{0,200}\")?\)"
    r"|<(?P<auto>(?:https?|mailto):[^\s<>]{1,2000})>"
)
_BOLD = re.compile(r"\*\*(?=\S)(.{1,500}?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*(?=[^\s*])([^*\n]{1,500}?)(?<=[^\s*])\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.{1,500}?)(?<=\S)~~")
_TICK_RUN = re.compile("`{3,}")
_TOKEN = re.compile("\x00(\\d+)\x00")
_SLACK_USER = re.compile(r"[UW](?=[A-Z]*\d)[A-Z0-9]{5,30}")
_SLACK_MENTION = re.compile(r"<@([UW][A-Z0-9]{5,30})>")
_ANY_MENTION = re.compile(r"<@[A-Z0-9]{1,40}(?:\|[^>]{0,200})?>")
"""A user mention in message text (`<@U123>` or `<@U123|name>`): bounded, so it scans in linear time."""
_SAFE_SCHEMES = ("http://", "https://", "mailto:")
_ADDRESS = re.compile(
    r"(?<![a-z0-9+.\-])[0-9+.\-]*+[a-z][a-z0-9+.\-]*+:/|[\w\-]\.[\w\-]|\bwww\b|\blocalhost\b|@[\w\-]|:[0-9a-f]*+:",
    re.I,
)
"""A scheme, a dotted name (a host, an IPv4 address, `name.tld/path`), `www`, `localhost`, an `@host`, an IPv6 address.

Only searched for (whether there is one), so each part is the least that shows it, and linear: a scheme is read
from the start of its run of scheme characters, a dot between name characters is a dotted name, two colons with
only hex digits between them an IPv6 address. (The whole forms, a run of name characters then dotted runs and the
like, rescanned a long word from each of its letters.)"""
_DOTS = str.maketrans(dict.fromkeys("\u3002\uff61\uff0e\u2024\ufe52\u00b7\u2219\u30fb\uff65", "."))
"""Full stops browsers take as dots (ideographic, fullwidth, halfwidth) and the middle dots that read as one."""
_BOLD_MARK = "\x01"


def escape_mrkdwn(text: str) -> str:
    """Slack's escaping: `&`, `<` and `>` become entities, so text cannot form mentions, links or dates."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def size(text: str) -> int:
    """Length in UTF-16 code units: never less than `len`, and what a JavaScript-side limit would count."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def fit(text: str, budget: int) -> int:
    """How many leading characters of `text` fit in `budget` size units."""
    if len(text) * 2 <= budget:
        return len(text)
    used = 0
    for i, c in enumerate(text):
        used += 2 if ord(c) > 0xFFFF else 1
        if used > budget:
            return i
    return len(text)


def clip(text: str, budget: int, ellipsis: str = "…") -> str:
    """`text` cut to `budget` size units, ending in `ellipsis` when cut (for plain text and fallbacks)."""
    if size(text) <= budget:
        return text
    return text[: fit(text, budget - size(ellipsis))] + ellipsis


def clip_mrkdwn(text: str, budget: int) -> str:
    """Like `clip`, for mrkdwn: never cuts inside an entity or a `<…>`."""
    return text if size(text) <= budget else text[: _safe_cut(text, budget - 1)] + "…"


def clip_literal(text: str, budget: int) -> str:
    """`literal(text)` cut to `budget` size units, ending in "…" when cut."""
    return clip_mrkdwn(literal(text[: budget + 1]), budget)


def literal(text: str) -> str:
    """Escaped text whose runs of backticks cannot open a code block (other mrkdwn still renders)."""
    return escape_mrkdwn(_TICK_RUN.sub(lambda m: BACKTICK_STANDIN * len(m.group()), text))


def code_text(text: str) -> str:
    """Text made safe inside a code span or fence: escaped, with backticks replaced by a look-alike."""
    return escape_mrkdwn(text.replace("`", BACKTICK_STANDIN))


def code_block(text: str) -> str:
    """A fenced code block holding `text` verbatim apart from the escaping above."""
    return f"{FENCE}\n{code_text(text)}\n{FENCE}"


def inline_code(text: str) -> str:
    """An inline code span (one line) holding `text`."""
    return f"`{code_text(' '.join(text.split()) or ' ')}`"


def quoted(text: str) -> str:
    """Escaped `text` as a Slack block quote, every line marked; a run of backticks cannot open a fence."""
    return "\n".join(f"> {literal(line)}".rstrip() for line in text.strip("\n").split("\n"))


def excerpt(text: str, chars: int, units: int, render: Callable[[str], str] = code_text) -> tuple[str, int]:
    """The head of `text` of at most `chars` characters whose `render` fits `units`; and how many were left out."""
    low, high = 0, max(0, min(len(text), chars, units))
    if size(render(text[:high])) > units:
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if size(render(text[:mid])) <= units else (low, mid - 1)
        high = low
    return text[:high], len(text) - high


def more_marker(count: int) -> str:
    """The line that says how much of a text was left out, or nothing."""
    return f"\n_… {count:,} more characters in the trace_" if count else ""


def user_ref(user: str | None) -> str:
    """A Slack user id as a mention (`<@U123>`; one already written so, as older stores kept Stops, stays one); an
    API client's requester (`api:claude`) as "API client `claude`"; anything else (a name, "alice (terminal)")
    escaped, never a mention."""
    if not user:
        return "someone"
    if (client := api_client_of(user)) is not None:
        return f"API client {inline_code(client)}"
    if (mention := _SLACK_MENTION.fullmatch(user)) is not None:
        user = mention.group(1)
    return f"<@{user}>" if _SLACK_USER.fullmatch(user) else clip_literal(" ".join(user.split()), 100)


def without_mentions(text: str) -> str:
    """A message's words without the @-mentions in it (`<@U123>`, `<@U123|name>`), on one line."""
    return " ".join(_ANY_MENTION.sub(" ", text).split())


def slack_date(at: datetime, token: str = "{date_short_pretty} {time}") -> str:
    """A `<!date^…>` that each reader sees in their own time zone; naive datetimes are taken as UTC."""
    at = at if at.tzinfo else at.replace(tzinfo=UTC)
    fallback = at.astimezone(UTC).strftime("%H:%M UTC" if token == "{time}" else "%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(at.timestamp())}^{token}|{fallback}>"


def markdown_to_mrkdwn(text: str) -> str:
    """Model Markdown as Slack mrkdwn: `**b**` → `*b*`, `*i*` → `_i_`, headings → bold lines, `[t](u)` → `<u|t>`
    (or `<u>` when `t` reads as an address: no label names another place than its link), bullets → •, code kept
    (fenced and inline). Everything else is escaped; only http(s) and mailto links survive."""
    out: list[str] = []
    fence: str | None = None
    for line in text.replace("\x00", "").replace(_BOLD_MARK, "").replace("\r\n", "\n").split("\n"):
        opener = _FENCE_LINE.match(line)
        if fence is not None:
            if (
                opener
                and opener.group(1)[0] == fence[0]
                and len(opener.group(1)) >= len(fence)
                and not line.strip(" `~")
            ):
                out.append(FENCE)
                fence = None
            else:
                out.append(code_text(line))
        elif opener and not (opener.group(1)[0] == "`" and "`" in line[opener.end() :]):
            out.append(FENCE)
            fence = opener.group(1)
        else:
            out.append(_convert_line(line))
    if fence is not None:
        out.append(FENCE)
    return "\n".join(out)


def inline_markdown(text: str) -> str:
    """One line of model Markdown as mrkdwn inside a sentence: code spans, links and emphasis converted, everything
    else escaped; no headings, bullets, quotes or fences (a leading `>` or ``` is text here)."""
    return _inline(" ".join(text.replace("\x00", "").replace(_BOLD_MARK, "").split()))


def _convert_line(line: str) -> str:
    if _RULE.match(line):
        return "──────────"
    if heading := _HEADING.match(line):
        content = heading.group(1).rstrip()
        if (bare := content.rstrip("#")) != content and (not bare or bare[-1].isspace()):
            content = bare.rstrip()
        content = _inline(content.replace("**", ""))
        return f"*{content}*" if content.strip() else ""
    if bullet := _BULLET.match(line):
        return f"{bullet.group(1)}• {_inline(bullet.group(2))}"
    if quote_ := _QUOTE.match(line):
        return f"> {_inline(quote_.group(1))}".rstrip()
    return _inline(line)


def _inline(text: str) -> str:
    """One line outside code: code spans and links set aside, the rest escaped and its emphasis converted."""
    kept: list[str] = []

    def keep(match: re.Match[str]) -> str:
        if match.group("code"):
            body = match.group("body")
            body = body[1:-1] if len(body) > 2 and body[0] == body[-1] == " " and body.strip() else body
            kept.append(f"`{code_text(body)}`")
        elif match.group("auto"):
            kept.append(f"<{_safe_url(match.group('auto'))}>")
        else:
            label, url = match.group("label").replace("**", ""), match.group("url")
            if not url.lower().startswith(_SAFE_SCHEMES):
                kept.append(escape_mrkdwn(f"{label} ({url})"))
            elif looks_like_address(label):  # shown as itself, so the visible text is where the link goes
                kept.append(f"<{_safe_url(url)}>")
            else:
                kept.append(link(url, label))
        return f"\x00{len(kept) - 1}\x00"

    text = escape_mrkdwn(_INLINE.sub(keep, text)).replace("`", BACKTICK_STANDIN)
    text = _BOLD.sub(lambda m: f"{_BOLD_MARK}{m.group(1)}{_BOLD_MARK}", text)
    text = _ITALIC.sub(r"_\1_", text)
    text = _STRIKE.sub(r"~\1~", text).replace(_BOLD_MARK, "*")
    return _TOKEN.sub(lambda m: kept[int(m.group(1))], text)


def looks_like_address(label: str) -> bool:
    """Whether a link's label reads as a URL, a host or an address (`https://x`, `grafana.example/d/1`, `10.0.0.1`,
    `ops@example.com`): such a label could name another place than the link's target, so the target is shown instead.

    Read as a person sees it: compatibility forms folded (fullwidth letters, one-dot leaders), ideographic full
    stops taken as the dots browsers take them for, and invisible characters (zero-width, bidi) ignored."""
    seen = "".join(c for c in unicodedata.normalize("NFKC", label) if unicodedata.category(c) != "Cf")
    return bool(_ADDRESS.search(seen.translate(_DOTS)))


def link(url: str, label: str) -> str:
    """A mrkdwn link `<url|label>`: the URL percent-quoted and entity-escaped, the label escaped."""
    return f"<{_safe_url(url)}|{code_text(label)}>"


def _safe_url(url: str) -> str:
    """A URL that cannot end the `<…>` early: `|<>"` and spaces percent-encoded, `&` escaped."""
    return quote(url, safe="/:?#[]@!$&'()*+,;=%~-._").replace("&", "&amp;")


def split_mrkdwn(text: str, limit: int) -> list[str]:
    """`text` in chunks of at most `limit` size units, each non-blank and with balanced code fences: a block
    cut between chunks is closed and reopened. Lines are kept whole where possible, never cut inside an
    entity or a `<…>` link; every chunk but the last is at least half full."""
    lines: list[tuple[bool, str]] = []
    in_code = False
    for line in text.split("\n"):
        if line == FENCE:
            in_code = not in_code
        else:
            lines.append((in_code, line))
    chunks: list[str] = []
    current: list[tuple[bool, str]] = []
    used = 0
    for code, line in lines:
        quote = not code and line.startswith("> ")
        while True:
            line_size = size(line) if len(line) <= limit else limit + 1
            cost = _added_cost(current, code, line_size)
            if used + cost <= limit:
                current.append((code, line))
                used += cost
                break
            room = limit - used - (cost - line_size)
            if current and (used * 2 >= limit or room < 16):
                chunks.append(_render(current))
                current, used = [], 0
                continue
            if not current:
                room = limit - (8 if code else 0)
            cut = _safe_cut(line, room)
            chunks.append(_render([*current, (code, line[:cut])]))
            current, used, line = [], 0, ("> " if quote else "") + line[cut:]
            if line in ("", "> "):
                break
    if current:
        chunks.append(_render(current))
    return [chunk for chunk in chunks if "".join(line for line in chunk.split("\n") if line != FENCE).strip()]


def _added_cost(current: list[tuple[bool, str]], code: bool, line_size: int) -> int:
    if not current:
        return line_size + (8 if code else 0)
    if code and not current[-1][0]:
        return line_size + 9
    return line_size + 1


def _render(items: list[tuple[bool, str]]) -> str:
    out: list[str] = []
    mode = False
    for code, line in items:
        if code != mode:
            out.append(FENCE)
            mode = code
        out.append(line)
    if mode:
        out.append(FENCE)
    return "\n".join(out)


def _safe_cut(line: str, budget: int) -> int:
    """Where to cut `line` so the head fits `budget`: not inside an `&…;` entity nor a `<…>`, when avoidable."""
    cut = max(1, fit(line[:budget], budget))
    floor = max(1, cut // 2)
    amp = line.rfind("&", max(0, cut - 5), cut)
    if amp >= floor and ";" not in line[amp:cut]:
        cut = amp
    opened = line.rfind("<", 0, cut)
    if opened >= floor and ">" not in line[opened:cut]:
        cut = opened
    return cut
