"""One tool call through the kernel's real Dispatcher (validation, timeout, redaction), as a run makes it.

Tool tests read what the model would read: the dispatched observation or the typed error, never a handler's raw return.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kernel import (
    DEFAULT_REDACTOR,
    CallContext,
    ConfirmHook,
    Dispatcher,
    DispatchResult,
    RunControl,
    SideEffectPolicy,
    Tool,
    ToolCall,
    ToolRegistry,
)


async def dispatch_call(
    tools: ToolRegistry | Iterable[Tool],
    name: str,
    /,
    *,
    policy: SideEffectPolicy | None = None,
    confirm: ConfirmHook | None = None,
    control: RunControl | None = None,
    **args: Any,
) -> DispatchResult:
    """Dispatch `name(**args)` over `tools`, by default under the read-only policy with no confirm hook."""
    registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
    dispatcher = Dispatcher(
        registry,
        policy=policy or SideEffectPolicy(),
        confirm=confirm,
        redactor=DEFAULT_REDACTOR,
        control=control or RunControl(),
    )
    call = ToolCall(name=name, args=args)
    return await dispatcher.dispatch(call, CallContext(run_id="test", step=1, call=call))


async def search_logs(tools: ToolRegistry | Iterable[Tool], **args: Any) -> DispatchResult:
    """One `search_logs` call."""
    return await dispatch_call(tools, "search_logs", **args)
