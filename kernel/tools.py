"""Tools and the registry that holds them: the agent-computer interface.

A tool's description and typed arguments are written for the model; the registry renders them.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, create_model

from kernel.call_context import CallContext
from kernel.calls import FINISH_TOOL
from kernel.llm import ToolSpec
from kernel.text_protocol import render_text_protocol

DEFAULT_TOOL_TIMEOUT = 15.0
"""Seconds a tool may run unless it says otherwise (the run's deadline may cut it shorter)."""

Handler = Callable[..., Awaitable[Any]]
"""A tool's implementation: called with the validated arguments as keyword arguments."""


@dataclass(frozen=True, eq=False)
class Tool:
    """One capability the model may call, with everything dispatch needs to run it safely."""

    name: str
    description: str
    """For the model: what it does, when to use it, its pitfalls."""
    args_model: type[BaseModel]
    """The typed arguments; dispatch validates every call against it."""
    handler: Handler
    timeout: float = DEFAULT_TOOL_TIMEOUT
    side_effect: bool = False
    """Whether the tool changes the world; such tools run only through the policy and an approval."""
    returns: str = ""
    """What comes back, told to the model so it knows what to expect."""
    max_calls_per_run: int | None = None
    """A rate limit: calls beyond it are refused with a model-visible error."""
    preview: Handler | None = None
    """For side-effect tools: what would be done, returned instead of acting under `dry_run`."""
    context_param: str | None = None
    """The handler's parameter annotated `CallContext`, filled in by dispatch; not a model argument."""
    keywords: tuple[str, ...] = ()
    """Words of its family ("logs", "loki", "exceptions"): with its name and description they choose whether a
    task's run offers its schema from the first turn (`kernel.tool_index`)."""
    family: str = ""
    """The family it comes with (its configuration section): a run's core takes the best tool of each family the
    task matches before a second of any one, so a task about errors gets metrics and logs, not two metric tools."""
    always: bool = False
    """Pinned by the operator (`[tools] always`): its schema is offered on every turn of every run."""
    summary: str = ""
    """For people: what it does, in one line ("Roll a service back to an earlier version"); an approval card shows
    it, never the model's `description`. Every tool we ship has one; a tool without shows no such line."""
    group: str = ""
    """Tools of one group (an MCP server's) share one line of the tool index, by name only: their descriptions
    are a server's text, not ours to summarise."""

    @property
    def spec(self) -> ToolSpec:
        """The model-facing description and JSON Schema (titles stripped to save tokens)."""
        return _spec(self.name, self.description, self.returns, self.args_model)


class ToolRegistry:
    """The set of tools a run may use; `register` is a decorator that builds a `Tool` from a function."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self.version = 0
        """Bumped by every `add`, so what is derived from the tool set can be cached against it."""
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> Tool:
        """Add a tool; names are unique and `finish` is reserved."""
        if tool.name == FINISH_TOOL:
            raise ValueError(f"'{FINISH_TOOL}' is reserved for ending a run")
        if tool.name in self._tools:
            raise ValueError(f"a tool named '{tool.name}' is already registered")
        self._tools[tool.name] = tool
        self.version += 1
        return tool

    @overload
    def register(self, fn: Handler, /) -> Tool: ...
    @overload
    def register(
        self,
        *,
        name: str | None = None,
        timeout: float = DEFAULT_TOOL_TIMEOUT,
        side_effect: bool = False,
        returns: str = "",
        max_calls_per_run: int | None = None,
        preview: Handler | None = None,
        summary: str = "",
    ) -> Callable[[Handler], Tool]: ...
    def register(self, fn: Handler | None = None, /, **options: Any) -> Tool | Callable[[Handler], Tool]:
        """Decorator: turn an async function into a tool. The docstring is the description and
        the annotated parameters (use `Annotated[str, Field(description=...)]`) are the arguments."""

        def build(f: Handler) -> Tool:
            return self.add(tool_from_function(f, **options))

        return build(fn) if fn is not None else build

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """Model-facing specs of every registered tool, in registration order."""
        return [tool.spec for tool in self._tools.values()]

    def render(self) -> str:
        """The tool catalogue as prompt text, for models without native function calling."""
        return render_text_protocol(self.specs())

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools


def tool_from_function(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    timeout: float = DEFAULT_TOOL_TIMEOUT,
    side_effect: bool = False,
    returns: str = "",
    max_calls_per_run: int | None = None,
    preview: Handler | None = None,
    summary: str = "",
) -> Tool:
    """Build a `Tool` from a function's signature and docstring (the model's description) and `summary` (the
    person's line); sync functions run in a thread."""
    description = inspect.cleandoc(fn.__doc__ or "").strip()
    if not description:
        raise ValueError(f"tool function '{fn.__name__}' needs a docstring: it is the model's description")
    return Tool(
        name=name or fn.__name__,
        description=description,
        args_model=args_model_for(fn),
        handler=fn if inspect.iscoroutinefunction(fn) else _in_thread(fn),
        timeout=timeout,
        side_effect=side_effect,
        returns=returns,
        max_calls_per_run=max_calls_per_run,
        preview=preview,
        context_param=context_param_of(fn),
        summary=summary,
    )


def context_param_of(fn: Callable[..., Any]) -> str | None:
    """The name of the function's `CallContext` parameter, if it has one."""
    hints = get_type_hints(fn, include_extras=True)
    return next((name for name, hint in hints.items() if hint is CallContext), None)


def args_model_for(fn: Callable[..., Any]) -> type[BaseModel]:
    """A pydantic model of the function's parameters (less its `CallContext`); unknown arguments are rejected."""
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ValueError(f"tool function '{fn.__name__}' may not take *args or **kwargs")
        if hints.get(param.name) is CallContext:
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints.get(param.name, Any), default)
    return create_model(f"{fn.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields)


@lru_cache(maxsize=1024)
def _spec(name: str, description: str, returns: str, args_model: type[BaseModel]) -> ToolSpec:
    """Schema generation is slow; tools rebuilt per run (such as `read_output`) share the result."""
    text = f"{description} Returns: {returns}" if returns else description
    return ToolSpec(name=name, description=text, parameters=_strip_titles(args_model.model_json_schema()))


def _in_thread(fn: Callable[..., Any]) -> Handler:
    async def run(**kwargs: Any) -> Any:
        return await asyncio.to_thread(fn, **kwargs)

    return run


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema
