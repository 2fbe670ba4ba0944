"""A model for the reachability check: it replays an investigation, then pages every output back via `read_output`.

It reads only the last observation shown; when a page view was itself truncated it continues after the visible head.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kernel import ChatRequest, LLMResponse, text_turn

_FENCED = re.compile(r"<data-(\w+)>\n(.*)\n</data-\1>", re.DOTALL)
_HEADER = re.compile(r"\[output (\S+): characters (\d+)-(\d+) of (\d+)[^\n]*\]\n")
_MARKER = "\n…[truncated about "


class PagerModel:
    """Plays `turns`, then `read_output(handle, offset)` page by page for each handle; `recovered` holds the texts."""

    def __init__(self, turns: Sequence[str], handles: Sequence[str]) -> None:
        self._turns = list(turns)
        self._handles = list(handles)
        self._next = 0
        self._current: str | None = None
        self._offset = 0
        self._chunks: list[str] = []
        self.recovered: dict[str, str] = {}
        self.reads = 0
        self.cut_pages = 0
        self.problems: list[str] = []

    @property
    def model(self) -> str:
        return "pager"

    async def complete(self, request: ChatRequest) -> LLMResponse:
        if self._next < len(self._turns):
            self._next += 1
            return LLMResponse(text=self._turns[self._next - 1], model="pager")
        if self._current is not None:
            self._take(request.messages[-1].content)
        if self._current is None:
            if not self._handles:
                return LLMResponse(text=text_turn("finish", answer="all outputs paged"), model="pager")
            self._current, self._offset, self._chunks = self._handles.pop(0), 0, []
        self.reads += 1
        return LLMResponse(text=text_turn("read_output", handle=self._current, offset=self._offset), model="pager")

    def _take(self, shown: str) -> None:
        """Read one page from the observation shown; advance, finish the handle, or give it up."""
        fenced = _FENCED.search(shown)
        header = _HEADER.match(fenced.group(2)) if fenced else None
        if fenced is None or header is None or header.group(1) != self._current or int(header.group(2)) != self._offset:
            self.problems.append(f"{self._current}@{self._offset}: unexpected page view {shown[:160]!r}")
            self._current = None
            return
        body = fenced.group(2)[header.end() :]
        end, total = int(header.group(3)), int(header.group(4))
        if _MARKER in body:
            self.cut_pages += 1
            body = body[: body.index(_MARKER)]
            end = self._offset + len(body)
        self._chunks.append(body)
        self._offset = end
        if end >= total:
            self.recovered[self._current] = "".join(self._chunks)
            self._current = None
