"""The tool catalogue every run offers the model: the registered tools, `read_output` and `finish`.

Built once per version of a tool set and shared by every run on it (rendering specs and counting their tokens
is slow), whichever `Agent` the runs come from.
"""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from kernel.context import prefix_tokens
from kernel.llm import ToolSpec
from kernel.observations import READ_OUTPUT_SPEC
from kernel.prompt import INSTRUCTIONS, finish_spec
from kernel.tools import ToolRegistry


@dataclass(frozen=True, slots=True)
class Catalogue:
    """The specs a run starts with, and the estimated tokens of the prompt prefix they make with the instructions."""

    specs: tuple[ToolSpec, ...]
    prefix_tokens: int


_BUILT: WeakKeyDictionary[ToolRegistry, tuple[int, Catalogue]] = WeakKeyDictionary()


def catalogue_of(tools: ToolRegistry) -> Catalogue:
    """The catalogue of `tools` as it is now (tools registered later are offered to later runs)."""
    built = _BUILT.get(tools)
    if built is not None and built[0] == tools.version:
        return built[1]
    specs = (*tools.specs(), READ_OUTPUT_SPEC, finish_spec())
    catalogue = Catalogue(specs, prefix_tokens(INSTRUCTIONS, specs))
    _BUILT[tools] = (tools.version, catalogue)
    return catalogue
