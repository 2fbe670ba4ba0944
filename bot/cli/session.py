"""A run watched from the terminal: its events shown as they come, Ctrl-C as a cancel, the trace saved.

Shared by `investigate` (and its follow-ups) and `demo`, so a person stops any run the same way and always gets
its trace, partial or not.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path

from bot.cli.terminal import Terminal
from bot.cli.terminal_approval import TypedLines
from kernel import RunControl, RunFinished, RunResult, RunStream, StopReason

TRACE_DIR = Path("traces")
CTRL_C_REASON = "cancelled at the terminal (Ctrl-C)"
INTERRUPTED_EXIT = 130
"""The shell's code for a process stopped by SIGINT: a run cancelled with Ctrl-C exits with it."""


async def watch(
    start: Callable[[RunControl], RunStream],
    terminal: Terminal,
    *,
    priced: bool = False,
    typed: TypedLines | None = None,
) -> RunResult:
    """Run `start(control)` to its end, showing each event (`priced`: with its cost). The first Ctrl-C cancels the
    run (it stops at once as `cancelled`, with its trace so far); a second one interrupts the process. With `typed`,
    a line typed while the run goes is guidance for it."""
    control = RunControl()
    loop = asyncio.get_running_loop()
    reading = None
    if typed is not None:
        typed.control = control
        reading = asyncio.create_task(typed.read(), name="typed-guidance")

    def cancel() -> None:
        terminal.say("\n■ Ctrl-C: stopping the run (press it again to quit at once)", style="bold yellow")
        control.cancel(CTRL_C_REASON)
        loop.remove_signal_handler(signal.SIGINT)

    loop.add_signal_handler(signal.SIGINT, cancel)
    result: RunResult | None = None
    try:
        async for event in start(control):
            terminal.show(event, priced=priced)
            if isinstance(event, RunFinished):
                result = event.result
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if reading is not None:
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)
        terminal.close()
    assert result is not None  # the loop always ends with RunFinished
    return result


def save_trace(result: RunResult, path: Path | None, terminal: Terminal, *, directory: Path = TRACE_DIR) -> Path:
    """Write the trace (to `path`, else `directory/<run id>.json`) and say where it went."""
    target = path or directory / f"{result.run_id}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(result.to_json(), encoding="utf-8")
    terminal.say(f"trace saved: {target}", style="dim")
    return target


def exit_code(result: RunResult) -> int:
    """0 for an answer, 130 for a run stopped with Ctrl-C, 1 for any other failure."""
    if result.ok:
        return 0
    return INTERRUPTED_EXIT if result.stop_reason is StopReason.CANCELLED else 1
