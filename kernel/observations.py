"""What the model sees of a tool's output: truncated with a marker, fenced as data, and paged by handle.

The full text always stays reachable through `read_output`, so nothing cut is lost.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from pydantic import Field

from kernel.tokens import CHARS_PER_TOKEN, estimate_tokens
from kernel.tools import Tool, tool_from_function

READ_OUTPUT_TOOL = "read_output"
PAGE_HEADER_TOKENS = 60
"""Room left in a page for its header line, so a page always fits the observation limit."""
HEAD_SHARE = 0.6
"""Share of the limit kept from the start of a long output; the rest comes from its end."""
TRUNCATION_MARKER = (
    '…[truncated about {tokens} tokens; read_output(handle="{handle}", offset={offset}) shows the cut part]…'
)

TRIMMED_MARKER = (
    '…[the tool left out about {tokens} tokens (every line behind the ones shown); read_output(handle="{handle}", '
    'offset={offset}) shows them, or match="…" finds lines]…'
)


def handle_for(step: int) -> str:
    """The handle under which step `step`'s full output is kept."""
    return f"o{step}"


def truncate_observation(text: str, limit_tokens: int, handle: str) -> str:
    """Keep the head (60%) and tail (40%) of a long output and say, in the text, what was cut."""
    tokens = estimate_tokens(text)
    if tokens <= limit_tokens:
        return text
    chars_per_token = len(text) / tokens
    head_end = _cut_at_line(text, int(limit_tokens * HEAD_SHARE * chars_per_token), forward=False)
    tail_start = _cut_at_line(text, len(text) - int(limit_tokens * (1 - HEAD_SHARE) * chars_per_token), forward=True)
    cut_tokens = estimate_tokens(text[head_end:tail_start])
    marker = TRUNCATION_MARKER.format(tokens=cut_tokens, handle=handle, offset=head_end)
    return f"{text[:head_end].rstrip()}\n{marker}\n{text[tail_start:].lstrip()}"


def trimmed_marker(more: str, handle: str, *, offset: int) -> str:
    """The marker after a digest whose tool kept `more` behind it (at `offset` of the handle's text): how to read it."""
    return TRIMMED_MARKER.format(tokens=estimate_tokens(more), handle=handle, offset=offset)


def _cut_at_line(text: str, at: int, *, forward: bool) -> int:
    """Move a cut point to a nearby line break (within a fifth of a line budget) to keep lines whole."""
    window = 200
    if forward:
        nl = text.find("\n", at, at + window)
        return nl + 1 if nl != -1 else at
    nl = text.rfind("\n", max(0, at - window), at)
    return nl if nl != -1 else at


class ObservationStore:
    """The full text of every step's output, by handle, for paging and for the trace."""

    def __init__(self, page_tokens: int) -> None:
        self._texts: dict[str, str] = {}
        self._page_tokens = page_tokens - PAGE_HEADER_TOKENS

    def keep(self, handle: str, text: str) -> None:
        """Remember the full output behind `handle`."""
        self._texts[handle] = text

    def get(self, handle: str) -> str | None:
        """The full output behind `handle`, if any."""
        return self._texts.get(handle)

    def items(self) -> list[tuple[str, str]]:
        """All handles and full outputs, in the order they were kept."""
        return list(self._texts.items())

    def page(self, handle: str, offset: int = 0, match: str | None = None) -> str:
        """A page of a kept output from `offset`, or only its lines containing `match`."""
        text = self._texts.get(handle.strip())
        if text is None:
            known = ", ".join(self._texts) or "none yet"
            raise LookupError(f"no output with handle '{handle}'. Known handles: {known}")
        if match:
            return self._matching_lines(handle, text, match)
        offset = max(0, min(offset, len(text)))
        end = min(len(text), offset + self._page_tokens * CHARS_PER_TOKEN)
        tokens = estimate_tokens(text[offset:end])
        if tokens > self._page_tokens:  # dense text (CJK): shrink so the page is never truncated in view
            end = offset + (end - offset) * self._page_tokens // tokens
        more = f'; next page: read_output(handle="{handle}", offset={end})' if end < len(text) else "; end of output"
        return f"[output {handle}: characters {offset}-{end} of {len(text)}{more}]\n{text[offset:end]}"

    def _matching_lines(self, handle: str, text: str, match: str) -> str:
        needle = match.lower()
        lines = text.splitlines()
        hits = [f"{n}: {line}" for n, line in enumerate(lines, 1) if needle in line.lower()]
        shown: list[str] = []
        size = 0
        for hit in hits:
            size += estimate_tokens(hit) + 1
            if size > self._page_tokens:
                break
            shown.append(hit)
        cut = f", first {len(shown)} shown" if len(shown) < len(hits) else ""
        header = f"[output {handle}: {len(hits)} of {len(lines)} lines contain {match!r}{cut}]"
        return "\n".join([header, *shown])


async def _read_output(
    handle: Annotated[str, Field(description='The handle named in a truncation marker or elided step, e.g. "o3".')],
    offset: Annotated[int, Field(ge=0, description="Character offset to start from.")] = 0,
    match: Annotated[
        str | None, Field(description="Only return lines containing this text (case-insensitive).")
    ] = None,
) -> str:
    """Read the full output of an earlier step: a page from `offset`, or only the lines that contain `match`.
    Use it when an observation says it was truncated or elided and the part you need is missing."""
    raise NotImplementedError("the per-run tool binds a store")


_READ_OUTPUT = tool_from_function(
    _read_output, name=READ_OUTPUT_TOOL, timeout=5.0, summary="Read the rest of an earlier step's output"
)
"""Built once: a run's `read_output` reuses its argument model and schema, binding only its store."""
READ_OUTPUT_SPEC = _READ_OUTPUT.spec


def read_output_tool(store: ObservationStore) -> Tool:
    """The built-in tool that pages through outputs that were truncated or dropped from view."""

    async def read_output(handle: str, offset: int = 0, match: str | None = None) -> str:
        return store.page(handle, offset, match)

    built = _READ_OUTPUT
    return replace(built, handler=read_output)
