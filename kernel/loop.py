"""The OpsAgent kernel loop: ask the model, run what it asks for, until a finish or a budget.

One async generator of typed events is the loop; `run` drains it. The loop never raises on
model output or tool behaviour: every failure becomes an observation or an explicit stop.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, assert_never

from kernel.budget import Budget, Pricing
from kernel.call_context import CallContext
from kernel.calls import FINISH_TOOL, ToolCall
from kernel.catalogue import catalogue_of
from kernel.clock import RunControl
from kernel.context import ContextPolicy, Conversation
from kernel.dispatch import Dispatcher, DispatchResult
from kernel.events import Event, GuidanceTaken, RunFinished, RunStarted, RunStream, StepCompleted, StepStarted
from kernel.llm import LLM, ChatRequest, LLMError, LLMResponse, Message
from kernel.observations import ObservationStore, handle_for, read_output_tool
from kernel.policy import Approved, ConfirmHook, Denied, SideEffectPolicy
from kernel.prompt import INSTRUCTIONS
from kernel.redaction import DEFAULT_REDACTOR, Redactor
from kernel.state import AwaitingApproval, LoopConfirmed, RunState, StreakExhausted, Verdict, elided_stub
from kernel.stop import Stop, StopReason
from kernel.tokens import estimate_tokens
from kernel.tool_errors import LOOP_GUARD, ErrorKind, StepError
from kernel.tools import ToolRegistry
from kernel.trace import RunResult, Step
from kernel.turns import PlannedStep, plan_turn

SALVAGE_REASONS = frozenset(
    {StopReason.MAX_STEPS, StopReason.LOOP_DETECTED, StopReason.TOOL_ERROR_EXHAUSTED, StopReason.UNPARSABLE_EXHAUSTED}
)
"""Stops after which one more model turn may summarise; budgets of time, tokens and money forbid it."""
SALVAGE_PROMPT = (
    "You must stop now: {reason}. Do not call any tool. Write what you know so far, citing the step numbers of the "
    "evidence, what you could not check, and what a human should check next. This will be shown as an unfinished result."
)


@dataclass(frozen=True, kw_only=True)
class Agent:
    """A configured kernel: model, tools, limits and safety settings. Runs are independent."""

    llm: LLM
    tools: ToolRegistry
    budget: Budget = field(default_factory=Budget)
    policy: SideEffectPolicy = field(default_factory=SideEffectPolicy)
    """Side effects are refused unless configured otherwise (read-only by default)."""
    confirm: ConfirmHook | None = None
    """Asks a human about each side-effect call; without it no side effect runs."""
    redactor: Redactor = DEFAULT_REDACTOR
    context: ContextPolicy = field(default_factory=ContextPolicy)
    prices: Mapping[str, Pricing] = field(default_factory=dict)
    salvage: bool = True
    """On a failed run, ask the model once for what it knows so far (recorded as `partial_answer`)."""

    def __post_init__(self) -> None:
        if self.budget.max_cost_usd is not None and self.llm.model not in self.prices:
            raise ValueError(f"a cost budget needs a price for model '{self.llm.model}': add it to `prices`")

    async def run(
        self, task: str, *, data: str = "", control: RunControl | None = None, run_id: str | None = None
    ) -> RunResult:
        """Run an investigation to its end and return the trace; `data` is what the task comes with (`events`)."""
        return await _drain(self.events(task, data=data, control=control, run_id=run_id))

    async def resume(
        self,
        trace: RunResult,
        *,
        decisions: Mapping[str, Approved | Denied] | None = None,
        control: RunControl | None = None,
    ) -> RunResult:
        """Continue a run from its saved trace, settling paused approvals with `decisions` (by approval id)."""
        return await _drain(self.events_from(trace, decisions=decisions, control=control))

    def events(
        self, task: str, *, data: str = "", control: RunControl | None = None, run_id: str | None = None
    ) -> RunStream:
        """Run an investigation, yielding each event as it happens. `data` is what the task comes with from
        elsewhere (alert details, an earlier answer): the model sees it fenced as data, like tool output, with no
        authority to instruct. `run_id` lets a caller that already keys things by run (approvals, a Slack thread)
        use its own id; by default one is made up."""
        state = self._new_state(
            run_id=run_id or new_run_id(),
            task=task,
            data=data,
            nonce=secrets.token_hex(4),
            started_at=datetime.now(UTC),
        )
        state.start(task)
        return RunStream(self._loop(state, control or RunControl(), {}, resumed=False), state.result)

    def events_from(
        self,
        trace: RunResult,
        *,
        decisions: Mapping[str, Approved | Denied] | None = None,
        control: RunControl | None = None,
    ) -> RunStream:
        """Continue a run from its trace (the trace is the checkpoint), yielding events."""
        if trace.ok:
            raise ValueError(f"run {trace.run_id} already finished; start a new run for a follow-up")
        state = self._new_state(
            run_id=trace.run_id,
            task=trace.task,
            data=trace.task_data,
            nonce=trace.nonce or secrets.token_hex(4),
            started_at=trace.started_at,
        )
        state.restore(trace)
        return RunStream(self._loop(state, control or RunControl(), dict(decisions or {}), resumed=True), state.result)

    async def _loop(
        self, state: RunState, control: RunControl, decisions: dict[str, Approved | Denied], *, resumed: bool
    ) -> AsyncIterator[Event]:
        """The loop: a resumed run's paused calls, then turn after turn while no stop stands. The helpers return
        every stop as a value, and the loop records it (`_record`) where it arises, before the event of the step
        that met it: a cancel, a spent budget or a failed model call instead of a turn, or a step's own (a finish,
        a cancel while it ran, a pause for approval, a confirmed loop, a streak of failures)."""
        yield RunStarted(run_id=state.run_id, task=state.task, resumed=resumed)
        control.start(self.budget.max_seconds - state.usage.elapsed_s)
        try:
            began, paused_before = time.monotonic(), control.paused_s
            dispatcher = self._dispatcher(state, control)
            for paused in [s for s in state.steps if s.pending]:
                step, stop = await self._settle(state, dispatcher, paused, decisions)
                _record(state, stop)
                yield StepCompleted(step, state.usage.cost_usd)
            state.close_turn()
            while state.stop is None:
                if (stop := self._stop_before_turn(state, control)) is not None:
                    _record(state, stop)
                    break
                for guidance in control.take_guidance(len(state.turns)):  # said since the last turn
                    yield GuidanceTaken(state.take_guidance(guidance))
                match await self._ask(state, control):
                    case Stop() as stop:
                        _record(state, stop)
                    case response:
                        turn, first = self._plan(state, response), state.next_index
                        reads = self._reads(state, dispatcher, turn)  # run at once, before any other call of the turn
                        together = tuple(first + i for i in reads)
                        for i, call in reads.items():
                            yield StepStarted(first + i, turn[i].thought, call, together=together)
                        ran = await self._run_reads(state, dispatcher, turn, reads) if reads else {}
                        for i, planned in enumerate(turn):  # recorded in the model's order, whatever finished first
                            if planned.call is not None and planned.error is None and i not in ran:
                                yield StepStarted(index=first + i, thought=planned.thought, call=planned.call)
                            step, stop = await self._step(state, dispatcher, planned, control, ran.get(i))
                            _record(state, stop)
                            yield StepCompleted(step, state.usage.cost_usd)
                        state.close_turn()
            state.usage.elapsed_s += time.monotonic() - began - (control.paused_s - paused_before)
            state.keep_unconfirmed_prose()
            if self.salvage and state.stop in SALVAGE_REASONS:
                await self._salvage(state, control)
        finally:
            control.end()  # also when the consumer abandons the stream
        yield RunFinished(state.result())

    def _stop_before_turn(self, state: RunState, control: RunControl) -> Stop | None:
        """A cancel, or a budget spent, that forbids another model turn."""
        if control.cancelled:
            return Stop(StopReason.CANCELLED, control.cancel_reason)
        spent = self.budget.check_before_turn(state.usage, control.left())
        return None if spent is None else Stop(spent)

    async def _ask(self, state: RunState, control: RunControl) -> LLMResponse | Stop:
        """The model's next turn, stamped with when it began and how long it took; or, if the call fails, the stop."""
        started_at, began = datetime.now(UTC), time.perf_counter()
        try:
            with control.limit():
                response = await self.llm.complete(state.conversation.request())
            response.started_at, response.ms = started_at, (time.perf_counter() - began) * 1000
            return response
        except LLMError as exc:
            return Stop(StopReason.LLM_ERROR, f"model call failed: {exc}")
        except TimeoutError:
            if control.cancelled:
                return Stop(StopReason.CANCELLED, control.cancel_reason)
            return Stop(StopReason.DEADLINE, "the deadline passed during a model call")
        except Exception as exc:  # an adapter bug must still end the run explicitly, not crash it
            return Stop(StopReason.LLM_ERROR, f"model adapter raised {type(exc).__name__}: {exc}")

    def _plan(self, state: RunState, response: LLMResponse) -> list[PlannedStep]:
        """Count the turn's usage and split it into steps; calls past the step budget are not run (the first calls
        in the model's order get the steps left, read or not)."""
        planned, native = plan_turn(response, reminded=state.reminded)
        if response.usage is not None:
            prompt, completion, estimated = response.usage.prompt_tokens, response.usage.completion_tokens, False
        else:
            completion = estimate_tokens(response.text) + sum(estimate_tokens(c.arguments) for c in response.tool_calls)
            prompt, estimated = state.conversation.prompt_tokens, True
        state.usage.add_turn(prompt, completion, estimated=estimated, price=self.prices.get(self.llm.model))
        state.begin_turn(response, native=native, prompt_tokens=prompt, completion_tokens=completion)
        room = self.budget.max_steps - state.usage.steps
        return [p if i < room else p.not_run("the step budget ran out in this turn") for i, p in enumerate(planned)]

    def _reads(self, state: RunState, dispatcher: Dispatcher, turn: list[PlannedStep]) -> dict[int, ToolCall]:
        """The turn's calls that run in parallel, by position: two or more valid native calls of read-only tools,
        each call once, that the loop guard lets through. The rest of the turn runs one call at a time after them.
        """
        if not state.native_turn:
            return {}
        reads: dict[int, ToolCall] = {}
        for i, planned in enumerate(turn):
            call = planned.call
            if call is None or planned.error is not None or not dispatcher.is_read(call):
                continue
            if any(call.key == other.key for other in reads.values()):
                continue  # a repeat within the turn runs after the first, where the loop guard sees it
            if state.guard.check(call, state.next_index + i) is None:
                reads[i] = call
        return reads if len(reads) > 1 else {}

    async def _run_reads(
        self, state: RunState, dispatcher: Dispatcher, turn: list[PlannedStep], reads: dict[int, ToolCall]
    ) -> dict[int, DispatchResult]:
        """Dispatch the turn's reads at once (each under the run's deadline); their outcomes by position."""
        first = state.next_index
        calls = [
            (call, CallContext(run_id=state.run_id, step=first + i, call=call, thought=turn[i].thought))
            for i, call in reads.items()
        ]
        return dict(zip(reads, await dispatcher.dispatch_reads(calls), strict=True))

    async def _step(
        self,
        state: RunState,
        dispatcher: Dispatcher,
        planned: PlannedStep,
        control: RunControl,
        ran: DispatchResult | None = None,
    ) -> tuple[Step, Stop | None]:
        """Run (or refuse) one planned step and record it; and the stop it meets, if any. `ran`: the outcome of a
        read that already ran with the others of its turn, recorded as it came even if the run began to stop at an
        earlier step of the turn (it was run before that step was recorded)."""
        call = planned.call
        if ran is not None:
            return _record_run(state, planned, ran, control)
        if planned.error is not None:
            step, verdict = state.record(planned, planned.error)
        elif call is None:  # prose that reads as an answer: the model is asked once to confirm it
            return state.remind(planned), None
        elif state.stop is not None and state.stop is not StopReason.AWAITING_APPROVAL:
            step, verdict = state.record(planned, planned.not_run(f"the run is stopping ({state.stop})").error)
        elif call.name == FINISH_TOOL:
            assert planned.conclusion is not None  # `plan_turn` reads every valid finish into one
            state.conclude(planned.conclusion)
            return state.record(planned)[0], Stop(StopReason.FINISH)
        elif (earlier := state.guard.check(call, state.next_index)) is not None:
            step, verdict = state.record(planned, _loop_warning(earlier))
        else:
            ctx = CallContext(run_id=state.run_id, step=state.next_index, call=call, thought=planned.thought)
            return _record_run(state, planned, await dispatcher.dispatch(call, ctx), control)
        return step, _stop_for(verdict)

    async def _settle(
        self, state: RunState, dispatcher: Dispatcher, paused: Step, decisions: Mapping[str, Approved | Denied]
    ) -> tuple[Step, Stop | None]:
        """Run (or refuse) a call that paused for approval, now that a decision may have arrived; and the stop it
        meets, if any (still undecided, it pauses the run again)."""
        assert paused.call is not None
        assert paused.approval is not None
        decision = decisions.get(paused.approval.approval_id)
        ctx = CallContext(run_id=state.run_id, step=paused.index, call=paused.call, thought=paused.thought)
        settled, verdict = state.settle(paused, await dispatcher.dispatch(paused.call, ctx, decision=decision))
        return settled, _stop_for(verdict)

    async def _salvage(self, state: RunState, control: RunControl) -> None:
        """Ask once, told not to use tools, for the best account so far; it stays `ok=False`."""
        prompt = Message(role="user", content=SALVAGE_PROMPT.format(reason=state.stop))
        live = state.conversation.request()
        request = ChatRequest(instructions=live.instructions, tools=live.tools, messages=[*live.messages, prompt])
        try:
            with control.limit():
                response = await self.llm.complete(request)
        except Exception as exc:  # the summary is a courtesy: its failure must not hide the stop reason
            state.detail += f"; the summary turn failed ({type(exc).__name__})"
            return
        planned, _ = plan_turn(response)  # native or text: a `finish` call carries the account
        finish = next((p.conclusion for p in planned if p.conclusion is not None), None)
        state.partial_answer = finish.answer if finish else response.text.strip() or None
        usage = response.usage
        prompt_tokens = (
            usage.prompt_tokens if usage else state.conversation.prompt_tokens + estimate_tokens(prompt.content)
        )
        completion_tokens = usage.completion_tokens if usage else estimate_tokens(response.text)
        state.usage.add_turn(
            prompt_tokens, completion_tokens, estimated=usage is None, price=self.prices.get(self.llm.model)
        )

    def _new_state(self, *, run_id: str, task: str, data: str, nonce: str, started_at: datetime) -> RunState:
        """A run's books, its offer chosen from the task and its data (the runbooks that may apply among them)."""
        store = ObservationStore(page_tokens=self.context.obs_limit_tokens)
        offering = catalogue_of(self.tools).offering(f"{task}\n{data}", self.context.core_tools)
        loader = [offering.tool()] if offering.deferred else []
        tools = ToolRegistry([*self.tools, read_output_tool(store), *loader])
        offer = offering.current()
        conversation = Conversation(
            INSTRUCTIONS, offer.specs, self.context, prefix_tokens=offer.prefix_tokens, make_stub=elided_stub
        )
        return RunState(
            run_id=run_id,
            task=task,
            model=self.llm.model,
            nonce=nonce,
            started_at=started_at,
            budget=self.budget,
            tools=tools,
            conversation=conversation,
            store=store,
            obs_limit_tokens=self.context.obs_limit_tokens,
            offering=offering,
            task_data=data,
        )

    def _dispatcher(self, state: RunState, control: RunControl) -> Dispatcher:
        return Dispatcher(
            state.tools,
            policy=self.policy,
            confirm=self.confirm,
            redactor=self.redactor,
            control=control,
            calls_so_far=state.dispatched_calls(),
        )


def new_run_id() -> str:
    """A short random run id, unique enough to name a trace file and a Slack thread's run."""
    return secrets.token_hex(6)


async def react(
    task: str, tools: ToolRegistry, *, llm: LLM, control: RunControl | None = None, **options: Any
) -> RunResult:
    """Run one investigation: shorthand for `Agent(llm=llm, tools=tools, **options).run(task)`; `options` are
    `Agent`'s other fields, and one it does not have is a `TypeError`."""
    return await Agent(llm=llm, tools=tools, **options).run(task, control=control)


async def _drain(events: AsyncIterable[Event]) -> RunResult:
    """The run's result, once its stream is exhausted (RunFinished is its last event): a stream left suspended
    would be closed by the event loop's finaliser, a task per run."""
    finished: RunResult | None = None
    async for event in events:
        match event:
            case RunFinished(result=result):
                finished = result
            case RunStarted() | GuidanceTaken() | StepStarted() | StepCompleted():
                pass
            case _:
                assert_never(event)
    if finished is None:
        raise RuntimeError("the run ended without a RunFinished event")  # unreachable: the loop always finishes
    return finished


def _record(state: RunState, stop: Stop | None) -> None:
    """The one place a run's stop is set, by the loop alone: the first stop holds, but a cancel ends whatever stood."""
    if stop is not None and stop.overrides(state.stop):
        state.stop, state.detail = stop.reason, state.detail if stop.detail is None else stop.detail


def _record_run(
    state: RunState, planned: PlannedStep, outcome: DispatchResult, control: RunControl
) -> tuple[Step, Stop | None]:
    """Record a call that was dispatched; a cancel that came while it ran is its stop, whatever the books saw."""
    step, verdict = state.record(planned, outcome)
    return step, Stop(StopReason.CANCELLED, control.cancel_reason) if control.cancelled else _stop_for(verdict)


def _stop_for(verdict: Verdict | None) -> Stop | None:
    """The stop for what the books saw in a step, if it is one."""
    match verdict:
        case None:
            return None
        case AwaitingApproval():
            return Stop(StopReason.AWAITING_APPROVAL)
        case LoopConfirmed(step=index):
            return Stop(
                StopReason.LOOP_DETECTED,
                f"step {index} repeated a call the loop guard had warned about, with the same result",
            )
        case StreakExhausted(reason=reason, step=index, error=error):
            return Stop(reason, f"stuck after step {index}: {error.said}")
        case _:
            assert_never(verdict)


def _loop_warning(earlier: int) -> StepError:
    return LOOP_GUARD.error(ErrorKind.LOOP_GUARD, step=earlier, handle=handle_for(earlier))
