"""Deferred tool schemas: a run offers a small core of tools in full and an index of the rest, loaded on demand.

Every turn's request carries the core's schemas (chosen from the task by `kernel.tool_index`, plus the tools the
operator pins), `finish`, `read_output` once an observation was cut, and `load_tools`, whose description is the index: one line per other tool
(its name and purpose), one line per MCP server (its tool names). `load_tools(names=[…])` or `load_tools(query=…)`
adds schemas to the run's offer from its next turn on, natively and in the text protocol's catalogue. Dispatch
still takes a call to any registered tool: a tool only in the index is validated like any other, and a bad call
gets the usual error with its signature.

A run defers nothing when deferring would not pay: when every tool fits the core, or when the index and
`load_tools` would cost as many tokens as the schemas they replace.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Protocol

from pydantic import Field

from kernel.llm import ToolSpec
from kernel.tool_errors import ToolFailure
from kernel.tool_index import purpose
from kernel.tool_output import ToolOutput
from kernel.tools import Tool, tool_from_function

LOAD_TOOLS_TOOL = "load_tools"
QUERY_LOADS = 3
"""Tools a `load_tools(query=…)` loads at most: the best matches among those in the index."""
LOAD_TOOLS_INTRO = "Load tools' schemas (by names or query) to call them from your next turn. Tools:"


@dataclass(frozen=True, slots=True)
class Offer:
    """The tools one request carries in full, and the estimated tokens of the prefix they make with the
    instructions; shared by every run and turn that offers the same tools (the catalogue keeps it)."""

    specs: tuple[ToolSpec, ...]
    prefix_tokens: int
    names: tuple[str, ...]
    """The registered tools among `specs`, in catalogue order: what the trace records of each turn."""


def index_lines(tools: Sequence[Tool]) -> list[str]:
    """The index: one line per tool (`name: purpose`), and one per group (an MCP server: its tools by name)."""
    lines: list[str] = []
    groups: dict[str, list[str]] = {}
    for tool in tools:
        if tool.group:
            if tool.group not in groups:
                groups[tool.group] = []
                lines.append(tool.group)  # a placeholder, filled below in the group's first place
            groups[tool.group].append(tool.name)
        else:
            lines.append(f"- {tool.name}: {purpose(tool.description)}")
    return [f"- {line}: {', '.join(groups[line])}" if line in groups else line for line in lines]


async def _load_tools(
    names: Annotated[list[str], Field(description="Tool names from the list.")] = [],  # noqa: B006 - never mutated
    query: Annotated[str, Field(description="Or words for what you need: the best matches load.")] = "",
) -> ToolOutput:
    """(the index is the description; see `load_tools_spec`)"""
    raise NotImplementedError("the per-run tool binds its offering")


_LOAD_TOOLS = tool_from_function(
    _load_tools, name=LOAD_TOOLS_TOOL, timeout=5.0, summary="Make more of the configured tools available to the model"
)
"""Built once: a run's `load_tools` reuses its argument model and schema, binding only its offering."""


def load_tools_spec(index: Sequence[str]) -> ToolSpec:
    """The spec of `load_tools` over an index: its description lists what can be loaded."""
    return ToolSpec(
        name=LOAD_TOOLS_TOOL,
        description="\n".join([LOAD_TOOLS_INTRO, *index]),
        parameters=_LOAD_TOOLS.spec.parameters,
    )


@dataclass(eq=False, slots=True)
class Offering:
    """What one run offers: its core, the tools it has loaded since, and the index of the rest."""

    tools: dict[str, Tool]
    """Every registered tool, by name."""
    core: frozenset[str]
    deferred: tuple[str, ...]
    """The tools in the index, in catalogue order; fixed for the run (loading one does not change the index)."""
    offers: Offers
    loaded: frozenset[str] = frozenset()
    """Replaced, not changed, on a load: most runs load nothing and share the empty one."""
    paging: bool = False
    """Whether `read_output` is offered: from the turn after the first observation that names a handle to page
    (a truncated or elided output, the loop guard's warning); before that it could read nothing cut."""
    _current: Offer | None = None

    def current(self) -> Offer:
        """The offer of the next request: the core and the loaded tools (and `read_output` once it can serve)."""
        if self._current is None:
            self._current = self.offers.offer(self.core | self.loaded, self.deferred, paging=self.paging)
        return self._current

    def offer_paging(self) -> None:
        """Offer `read_output` from the next request on."""
        if not self.paging:
            self.paging, self._current = True, None

    def load(self, names: Sequence[str], query: str) -> ToolOutput:
        """Load tools by name or by query, and say which (with their signatures) or why none, to the model and, in
        a headline, to people; a `ToolFailure` when nothing could be loaded. Pure but for the run's offer: a
        resumed run replays it from the trace."""
        unknown = [name for name in names if name not in self.tools]
        chosen = [name for name in dict.fromkeys(names) if name in self.tools]
        if query.strip():
            chosen += [n for n in self.offers.search(query, tuple(self.tools), QUERY_LOADS) if n not in chosen]
        if not chosen:
            asked = f"no tool matches {query!r}" if query.strip() and not names else "no tool has that name"
            raise ToolFailure(
                f"{asked}{_unknown(unknown)}.", hint="Give names from load_tools' list, or other words in query."
            )
        offered = set(self.current().names)
        new = [name for name in chosen if name not in offered]
        self.loaded = self.loaded.union(new)
        self._current = None
        said = f"Loaded {', '.join(new)}: offered in full from your next turn on." if new else ""
        already = [name for name in chosen if name in offered]
        also = f"Already offered: {', '.join(already)}." if already else ""
        text = " ".join(part for part in (said, also, _unknown(unknown).strip("; ").capitalize()) if part)
        shown = f"loaded the schemas of {', '.join(new)}" if new else f"already offered: {', '.join(already)}"
        return ToolOutput(text, headline=shown)

    def replay(self, args: Mapping[str, Any]) -> None:
        """Load again what a recorded `load_tools` call loaded (it succeeded, so its arguments were valid)."""
        with contextlib.suppress(ToolFailure):
            self.load(list(args.get("names", [])), str(args.get("query", "")))

    def tool(self) -> Tool:
        """The run's `load_tools`, bound to this offering."""

        async def load_tools(names: list[str] = [], query: str = "") -> ToolOutput:  # noqa: B006 - never mutated
            return self.load(names, query)

        built = _LOAD_TOOLS
        description = self.offers.index_spec(self.deferred).description
        return replace(built, description=description, handler=load_tools)


def _unknown(names: Sequence[str]) -> str:
    return f"; not tools here: {', '.join(repr(n) for n in names)}" if names else ""


class Offers(Protocol):
    """A catalogue's offers, each made once (specs rendered, tokens counted) and shared by the runs that make the
    same one, and its search over the tools (`kernel.catalogue.Catalogue`)."""

    def offer(self, shown: frozenset[str], deferred: tuple[str, ...], *, paging: bool) -> Offer:
        """The offer of `shown` in full with the index of `deferred`, and `read_output` when `paging`."""
        ...

    def index_spec(self, deferred: tuple[str, ...]) -> ToolSpec:
        """`load_tools`' spec over the index of `deferred`."""
        ...

    def search(self, query: str, among: Sequence[str], limit: int) -> list[str]:
        """The tools of `among` that `query` matches, best first."""
        ...
