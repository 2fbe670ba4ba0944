"""A model turn's independent reads run at once; its side effects one at a time, after them.

Concurrency is proven without clocks: each read waits on a barrier only all the turn's reads together can pass,
so run one at a time the first would wait until its time limit and fail. Every run is under a deadline.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field

from kernel import (
    Agent,
    ApprovalRequest,
    Approved,
    Budget,
    ErrorKind,
    Event,
    RunControl,
    RunResult,
    ScriptedModel,
    SideEffectMode,
    SideEffectPolicy,
    StepCompleted,
    StepStarted,
    StopReason,
    ToolRegistry,
    native_turn,
)

FINISH = native_turn(("finish", {"answer": "Read them all."}), start_id=9)
FULL = SideEffectPolicy(mode=SideEffectMode.FULL)


def read(name: str, after: str = "") -> tuple[str, dict[str, str]]:
    return ("read", {"name": name, "after": after} if after else {"name": name})


class Reads:
    """Read tools that meet at a barrier of `parties`, and a side effect; `log` is what ran, in the order it did."""

    def __init__(self, parties: int) -> None:
        self.barrier = asyncio.Barrier(parties)
        self.log: list[str] = []
        self.done: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.tools = ToolRegistry()

        @self.tools.register(timeout=5)
        async def read(name: str, after: str = "") -> str:
            """Read one thing; waits for all reads of the turn, then for the read named `after` to finish."""
            await self.barrier.wait()
            if after:
                await self.done[after].wait()
            self.log.append(name)
            self.done[name].set()
            if name == "broken":
                raise ConnectionError("backend reset the connection")
            return f"contents of {name}"

        @self.tools.register(side_effect=True)
        async def restart(service: str) -> str:
            """Restart a service."""
            self.log.append(f"restart {service}")
            return f"{service} restarted"


async def approve(request: ApprovalRequest) -> Approved:
    return Approved(by="oncall", args_hash=request.args_hash)


@dataclass
class Run:
    result: RunResult
    model: ScriptedModel
    events: list[Event] = field(default_factory=list)

    def trail(self) -> list[tuple[str, str, ErrorKind | None]]:
        """Each step as (tool, what it read or restarted, error kind), in the trace's order."""
        return [(s.call.name, next(iter(s.call.args.values())), s.error) for s in self.result.steps if s.call]

    def steps_events(self) -> list[tuple[str, int]]:
        return [
            ("started", e.index) if isinstance(e, StepStarted) else ("completed", e.step.index)
            for e in self.events
            if isinstance(e, StepStarted | StepCompleted)
        ]


async def investigate(tools: ToolRegistry, script: list, control: RunControl | None = None, **options) -> Run:
    """Run the script to its end under a deadline, keeping every event."""
    model = ScriptedModel(script)
    agent = Agent(llm=model, tools=tools, salvage=False, **options)
    async with asyncio.timeout(20):
        events = [event async for event in agent.events("what is wrong?", control=control)]
    model.assert_complete()
    return Run(events[-1].result, model, events)


async def test_three_reads_of_a_turn_run_at_once_and_are_recorded_in_call_order():
    reads = Reads(3)
    run = await investigate(reads.tools, [native_turn(read("a", after="b"), read("b", after="c"), read("c")), FINISH])
    assert reads.log == ["c", "b", "a"]  # all three passed the barrier together, then finished in reverse order
    assert run.result.ok
    assert run.trail() == [
        ("read", "a", None),
        ("read", "b", None),
        ("read", "c", None),
        ("finish", "Read them all.", None),
    ]
    assert [s.observation for s in run.result.steps[:3]] == ["contents of a", "contents of b", "contents of c"]
    assert run.steps_events()[:6] == [("started", i) for i in (1, 2, 3)] + [("completed", i) for i in (1, 2, 3)]
    assert [e.together for e in run.events if isinstance(e, StepStarted)] == [(1, 2, 3)] * 3 + [()]
    # The model gets each reply to its own call id, in the order it made the calls.
    replies = [m for m in run.model.requests[1].messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content.splitlines()[1]) for m in replies] == [
        ("call_1", "contents of a"),
        ("call_2", "contents of b"),
        ("call_3", "contents of c"),
    ]


async def test_a_side_effect_of_the_turn_runs_after_its_reads_but_keeps_its_place_in_the_trace():
    reads = Reads(3)
    turn = native_turn(("restart", {"service": "checkout"}), read("a"), read("b"), read("c"))
    run = await investigate(reads.tools, [turn, FINISH], policy=FULL, confirm=approve)
    assert reads.log[3:] == ["restart checkout"]
    assert sorted(reads.log[:3]) == ["a", "b", "c"]
    assert run.trail()[:4] == [
        ("restart", "checkout", None),
        ("read", "a", None),
        ("read", "b", None),
        ("read", "c", None),
    ]
    assert run.result.steps[0].approval is not None
    assert run.result.steps[0].approval.decision == "approved"
    assert run.steps_events()[:8] == [
        ("started", 2),
        ("started", 3),
        ("started", 4),
        ("started", 1),
        ("completed", 1),
        ("completed", 2),
        ("completed", 3),
        ("completed", 4),
    ]


async def test_one_failing_read_is_its_own_error_and_the_others_stand():
    reads = Reads(3)
    run = await investigate(reads.tools, [native_turn(read("a"), read("broken"), read("c")), FINISH])
    assert run.trail()[:3] == [("read", "a", None), ("read", "broken", ErrorKind.EXCEPTION), ("read", "c", None)]
    assert "ConnectionError" in run.result.steps[1].observation
    assert "backend reset the connection" in run.result.steps[1].observation
    assert [run.result.steps[i].observation for i in (0, 2)] == ["contents of a", "contents of c"]
    assert run.result.ok


async def test_reads_past_the_step_budget_are_not_run_the_first_ones_run_together():
    """Two steps left and three reads: the first two in the model's order run, together; the third is not run."""
    reads = Reads(2)
    run = await investigate(reads.tools, [native_turn(read("a"), read("b"), read("c"))], budget=Budget(max_steps=2))
    assert sorted(reads.log) == ["a", "b"]
    assert run.trail() == [("read", "a", None), ("read", "b", None), ("read", "c", ErrorKind.NOT_RUN)]
    assert "the step budget ran out in this turn" in run.result.steps[2].observation
    assert run.result.stop_reason is StopReason.MAX_STEPS


async def test_the_deadline_ends_a_hanging_read_and_leaves_the_ones_that_finished():
    reads = Reads(2)
    hang = asyncio.Event()

    registry = reads.tools

    @registry.register(timeout=60)
    async def wait_forever(name: str) -> str:
        """Never answers."""
        await reads.barrier.wait()
        await hang.wait()
        return "unreachable"

    turn = native_turn(read("a"), ("wait_forever", {"name": "x"}))
    run = await investigate(reads.tools, [turn], budget=Budget(max_seconds=0.5))
    assert run.trail() == [("read", "a", None), ("wait_forever", "x", ErrorKind.TIMEOUT)]
    assert "deadline" in run.result.steps[1].observation
    assert run.result.stop_reason is StopReason.DEADLINE


async def test_a_cancel_cuts_every_read_of_the_group_short():
    tools, control = ToolRegistry(), RunControl()
    in_flight, all_in = [], asyncio.Event()

    @tools.register(timeout=60)
    async def hold(name: str) -> str:
        """Holds until cut off."""
        in_flight.append(name)
        if len(in_flight) == 3:  # only reached with all three running at once
            all_in.set()
        await asyncio.Event().wait()
        return "unreachable"

    async def cancel_once_all_are_in() -> None:
        await all_in.wait()
        control.cancel("the on-call engineer stopped it")

    canceller = asyncio.create_task(cancel_once_all_are_in())
    run = await investigate(tools, [native_turn(*(("hold", {"name": n}) for n in "abc"))], control=control)
    await canceller
    assert run.trail() == [("hold", name, ErrorKind.CANCELLED) for name in "abc"]
    assert (run.result.stop_reason, run.result.detail) == (StopReason.CANCELLED, "the on-call engineer stopped it")


async def test_a_repeated_read_in_one_turn_runs_after_the_first_where_the_loop_guard_sees_it():
    reads = Reads(2)
    run = await investigate(reads.tools, [native_turn(read("a"), read("b"), read("a")), FINISH])
    assert run.trail()[:3] == [("read", "a", None), ("read", "b", None), ("read", "a", ErrorKind.LOOP_GUARD)]
    assert sorted(reads.log) == ["a", "b"]


async def test_a_read_after_the_step_that_stops_the_run_ran_with_its_group_and_is_recorded_as_it_came():
    """The reads all ran before any step of the turn was recorded; the streak stop after step 3 holds."""
    reads = Reads(1)  # the refused calls never reach the tool, so "a" meets nobody at the barrier
    stuck = ("read", {"name": 7})  # a wrong type: refused by validation, the same way each time
    turn = native_turn(stuck, stuck, stuck, read("a"))
    run = await investigate(reads.tools, [turn], budget=Budget(max_consecutive_errors=3))
    assert [s.error for s in run.result.steps] == [ErrorKind.BAD_ARGS] * 3 + [None]
    assert run.result.steps[3].observation == "contents of a"
    assert run.result.stop_reason is StopReason.TOOL_ERROR_EXHAUSTED
