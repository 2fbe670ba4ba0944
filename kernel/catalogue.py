"""The tool catalogue runs offer the model: the registered tools, `read_output`, `load_tools` and `finish`.

Built once per version of a tool set and shared by every run on it, whichever `Agent` the runs come from: rendering
specs and counting their tokens is slow, so each offer (the tools a request carries in full, `kernel.deferral`) is
made once and shared by every run and turn that makes the same one.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from weakref import WeakKeyDictionary

from kernel.context import prefix_tokens
from kernel.deferral import LOAD_TOOLS_TOOL, Offer, Offering, index_lines, load_tools_spec
from kernel.llm import ToolSpec
from kernel.observations import READ_OUTPUT_SPEC
from kernel.prompt import INSTRUCTIONS, finish_spec
from kernel.tokens import estimate_tokens
from kernel.tool_index import ToolIndex
from kernel.tools import Tool, ToolRegistry

OFFERS_KEPT = 256
"""Offers remembered per catalogue (a core per kind of task, and the loads made from it), least recent dropped."""


class Catalogue:
    """A tool set's offers and its index; `offering` chooses what one run offers."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self._every = frozenset(self.tools)
        """Every tool's name, shared by the runs that defer nothing (a set per run was a tenth of its memory)."""
        self._order = {name: position for position, name in enumerate(self.tools)}
        self._tokens = {tool.name: estimate_tokens(json.dumps(tool.spec.model_dump())) for tool in tools}
        self._index: ToolIndex | None = None
        self._offers: OrderedDict[tuple[frozenset[str], tuple[str, ...], bool], Offer] = OrderedDict()
        self._index_specs: dict[tuple[str, ...], ToolSpec] = {}

    @property
    def index(self) -> ToolIndex:
        """BM25 over the tools, built on the first run that needs it."""
        if self._index is None:
            self._index = ToolIndex(list(self.tools.values()))
        return self._index

    def offering(self, task: str, core_size: int) -> Offering:
        """What a run on `task` (with its data) offers: the pinned tools and the `core_size` tools the task matches
        best, with an index of the rest; or every tool, when they fit the core or deferring would not save tokens."""
        pinned = [name for name, tool in self.tools.items() if tool.always]
        rest = [name for name, tool in self.tools.items() if not tool.always]
        if len(rest) <= core_size:
            return self._everything()
        core = frozenset([*pinned, *self.index.best(task, rest, core_size)])
        deferred = tuple(name for name in self.tools if name not in core)
        index_cost = estimate_tokens(json.dumps(self.index_spec(deferred).model_dump()))
        if index_cost >= sum(self._tokens[name] for name in deferred):
            return self._everything()
        return Offering(self.tools, core, deferred, self)

    def _everything(self) -> Offering:
        return Offering(self.tools, self._every, (), self)

    def offer(self, shown: frozenset[str], deferred: tuple[str, ...], *, paging: bool) -> Offer:
        """`shown` in full (catalogue order), `read_output` when `paging`, the index of `deferred` as `load_tools`,
        then `finish`."""
        key = (shown, deferred, paging)
        made = self._offers.get(key)
        if made is not None:
            self._offers.move_to_end(key)
            return made
        names = tuple(sorted(shown, key=self._order.__getitem__))
        index = (self.index_spec(deferred),) if deferred else ()
        pager = (READ_OUTPUT_SPEC,) if paging else ()
        specs = (*(self.tools[name].spec for name in names), *pager, *index, finish_spec())
        made = Offer(specs, prefix_tokens(INSTRUCTIONS, specs), names)
        self._offers[key] = made
        if len(self._offers) > OFFERS_KEPT:
            self._offers.popitem(last=False)
        return made

    def index_spec(self, deferred: tuple[str, ...]) -> ToolSpec:
        """`load_tools`' spec, its description the index of `deferred`."""
        spec = self._index_specs.get(deferred)
        if spec is None:
            spec = load_tools_spec(index_lines([self.tools[name] for name in deferred]))
            if len(self._index_specs) < OFFERS_KEPT:
                self._index_specs[deferred] = spec
        return spec

    def search(self, query: str, among: Sequence[str], limit: int) -> list[str]:
        """The tools of `among` that share words with `query`, best first."""
        return self.index.matching(query, among, limit)


_BUILT: WeakKeyDictionary[ToolRegistry, tuple[int, Catalogue]] = WeakKeyDictionary()


def catalogue_of(tools: ToolRegistry) -> Catalogue:
    """The catalogue of `tools` as it is now (tools registered later are offered to later runs)."""
    built = _BUILT.get(tools)
    if built is not None and built[0] == tools.version:
        return built[1]
    if LOAD_TOOLS_TOOL in tools:
        raise ValueError(f"'{LOAD_TOOLS_TOOL}' is the kernel's own tool: register yours under another name")
    catalogue = Catalogue(list(tools))
    _BUILT[tools] = (tools.version, catalogue)
    return catalogue
