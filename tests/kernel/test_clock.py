"""The run's clock: time limits without a timer per call, cut short by their time, the deadline or a cancel.

Each scope must end exactly as `asyncio.timeout_at` would: TimeoutError when its own time is up, the caller's
CancelledError when someone else cancels the task, and nothing at all when the body ends in time.
"""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from kernel import RunControl


async def test_a_call_longer_than_its_limit_ends_in_timeout_error():
    control = RunControl()
    scope = control.limit(0.02)
    with pytest.raises(TimeoutError), scope:
        await asyncio.sleep(5)
    assert scope.expired


async def test_the_deadline_cuts_a_call_whose_own_limit_is_later():
    control = RunControl()
    control.start(0.02)
    with pytest.raises(TimeoutError):
        async with control.limit(30):
            await asyncio.sleep(5)
    assert control.left() <= 0


async def test_a_call_that_ends_in_time_is_left_alone_and_a_later_short_limit_still_fires():
    control = RunControl()
    long = control.limit(30)
    with long:
        await asyncio.sleep(0)
    assert not long.expired
    short = control.limit(0.02)  # earlier than the alarm the first call left: the alarm must move up
    with pytest.raises(TimeoutError), short:
        await asyncio.sleep(5)


async def test_an_alarm_left_by_an_earlier_call_does_not_cut_a_later_call_short():
    control = RunControl()
    with control.limit(0.01):
        await asyncio.sleep(0)
    later = control.limit(30)
    with later:  # the first call's alarm rings during this one, which is not due: it must go on
        await asyncio.sleep(0.05)
    assert not later.expired


async def test_many_calls_in_a_row_each_keep_their_own_limit():
    control = RunControl()
    for _ in range(200):
        with control.limit(30):
            await asyncio.sleep(0)
    with pytest.raises(TimeoutError), control.limit(0.02):
        await asyncio.sleep(5)


async def test_cancel_cuts_every_call_in_flight():
    control = RunControl()
    started = asyncio.Event()

    async def call() -> str:
        try:
            with control.limit(30):
                started.set()
                await asyncio.sleep(5)
        except TimeoutError:
            return "cut"
        return "ran"

    calls = [asyncio.create_task(call()) for _ in range(3)]
    await started.wait()
    await asyncio.sleep(0)
    control.cancel("stopped by @alice")
    assert await asyncio.gather(*calls) == ["cut", "cut", "cut"]
    assert control.cancel_reason == "stopped by @alice"


async def test_a_call_after_a_cancel_is_cut_at_its_first_await_and_one_without_awaits_completes():
    control = RunControl()
    control.cancel("stopped")
    with control.limit():
        pass  # nothing awaited: nothing to cut, and no cancellation left behind for the task
    await asyncio.sleep(0)
    with pytest.raises(TimeoutError), control.limit():
        await asyncio.sleep(5)


async def test_someone_elses_cancel_stays_a_cancel():
    control = RunControl()
    inside = asyncio.Event()

    async def call() -> None:
        with control.limit(30):
            inside.set()
            await asyncio.sleep(5)

    task = asyncio.create_task(call())
    await inside.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_timeout_error_of_the_call_itself_is_not_the_scopes():
    control = RunControl()
    scope = control.limit(30)

    async def backend_call() -> None:
        await asyncio.sleep(0)
        raise TimeoutError("the backend's own timeout")

    with pytest.raises(TimeoutError, match="the backend's own timeout"), scope:
        await backend_call()
    assert not scope.expired


async def test_time_paused_for_a_human_moves_the_deadline():
    control = RunControl()
    control.start(0.05)
    async with control.paused():
        await asyncio.sleep(0.1)
    assert control.left() > 0
    assert control.paused_s >= 0.1


async def test_ending_the_run_lets_its_control_go_although_its_deadline_is_far():
    control = RunControl()
    control.start(300)
    with control.limit():
        await asyncio.sleep(0)
    control.end()
    gone = weakref.ref(control)
    del control
    gc.collect()
    assert gone() is None, "the loop's timer still holds the run's control"
