"""The comparison baseline, not product code: the reference ReAct kernel of kernel.md, implemented faithfully.

Standard library only; it rebuilds the whole prompt every step and wraps each LLM and tool call in `asyncio.wait_for`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

UNPARSABLE = "__unparsable__"
FINISH = "finish"
LLMFn = Callable[[str], Awaitable[str]]
ConfirmFn = Callable[["ToolCall"], bool]

SYSTEM_PROMPT = """You are an incident investigator working in steps.
Each step: write a thought in three parts (Known: facts traceable to an observation; Missing: what you still need;
Why: why this action gets it), without restating observations. Then write exactly one JSON action block:
```json
{"action": "<tool>", "args": {...}}
```
Finish with {"action": "finish", "args": {"answer": "..."}}.
Reason only from observations and say when evidence is insufficient. A tool error is a fact that must change your
strategy. Do not repeat a call that just returned the same result."""

_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u3040-\u30ff\uff00-\uffef]")
_FENCE = re.compile(r"```json\s*(.*?)```", re.DOTALL)


def estimate_tokens(text: str) -> int:
    """CJK about one token per character, other text about four characters per token."""
    if text.isascii():
        return len(text) // 4
    cjk = len(_CJK.findall(text))
    return cjk + (len(text) - cjk) // 4


def truncate(s: str, limit: int = 1200) -> str:
    """Keep the head (60%) and tail (40%) of `s` within `limit` tokens, saying what was cut."""
    tokens = estimate_tokens(s)
    if tokens <= limit:
        return s
    head, tail = int(limit * 0.6) * 4, int(limit * 0.4) * 4
    return f"{s[:head]}\n…[truncated about {tokens - limit} tokens]…\n{s[-tail:]}"


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]


@dataclass
class Tool:
    name: str
    description: str
    params: dict[str, Any]
    handler: Callable[..., Awaitable[Any]]
    timeout: float = 15.0
    side_effect: bool = False
    returns: str = ""


class ToolRegistry:
    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}

    def register(self, description: str, params: dict[str, Any], **options: Any) -> Callable[..., Any]:
        """Decorator: register an async handler as a tool."""

        def deco(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
            self.tools[fn.__name__] = Tool(fn.__name__, description, params, fn, **options)
            return fn

        return deco

    def render(self) -> str:
        """The tool set as a prompt fragment (the agent-computer interface)."""
        lines = []
        for t in self.tools.values():
            lines.append(f"- {t.name}: {t.description}\n  params: {json.dumps(t.params)}")
            if t.returns:
                lines.append(f"  returns: {t.returns}")
        return "\n".join(lines)

    async def dispatch(self, call: ToolCall, confirm: ConfirmFn | None = None) -> str:
        """The single safety boundary: never raises; failures start with [ToolError]."""
        tool = self.tools.get(call.name)
        if tool is None:
            return f"[ToolError] unknown tool '{call.name}'. Available: {', '.join(self.tools)}"
        missing = [p for p in tool.params.get("required", []) if p not in call.args]
        if missing:
            return f"[ToolError] missing required params {missing}. Schema: {json.dumps(tool.params)}"
        if tool.side_effect and confirm is not None and not confirm(call):
            return "[ToolError] side effect refused; use a read-only tool or ask the user to authorise"
        try:
            result = await asyncio.wait_for(tool.handler(**call.args), timeout=tool.timeout)
        except TimeoutError:
            return f"[ToolError] timeout after {tool.timeout}s; narrow the time window or use another tool"
        except Exception as exc:
            return f"[ToolError] {type(exc).__name__}: {exc}"
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def _brace_spans(text: str) -> list[str]:
    """Every outermost balanced {...} span (string-aware brace matching, not a regex)."""
    spans, depth, start, in_str, esc = [], 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            esc, in_str = (False, in_str) if esc else (ch == "\\", ch != '"')
        elif ch == '"' and depth:
            in_str = True
        elif ch == "{":
            start = i if depth == 0 else start
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def parse_output(text: str) -> tuple[str, ToolCall]:
    """(thought, call); never raises. Fenced JSON first, then balanced-brace spans."""
    for candidate in [*_FENCE.findall(text), *_brace_spans(text)]:
        try:
            obj = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        name = obj.get("action") or obj.get("tool") or obj.get("name")
        if not isinstance(name, str):
            continue
        args = next((obj[k] for k in ("args", "arguments", "parameters") if k in obj), {})
        if not isinstance(args, dict):
            args = {"_raw": args}
        cut = text.find("```json") if "```json" in text else text.find(candidate)
        return text[: max(cut, 0)].strip(), ToolCall(name, args)
    return text.strip(), ToolCall(UNPARSABLE, {})


@dataclass
class Budget:
    max_steps: int = 12
    max_prompt_tokens: int = 300_000
    max_seconds: float = 180.0
    max_consecutive_errors: int = 3


@dataclass
class Usage:
    steps: int = 0
    prompt_tokens: int = 0
    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def exhausted(self, budget: Budget) -> str | None:
        if self.steps >= budget.max_steps:
            return "max_steps"
        if self.prompt_tokens >= budget.max_prompt_tokens:
            return "token_budget"
        if self.elapsed() >= budget.max_seconds:
            return "timeout"
        return None


@dataclass
class Step:
    i: int
    thought: str
    call: ToolCall
    observation: str
    ms: float
    prompt_tokens: int


@dataclass
class RunResult:
    ok: bool
    answer: str
    stop_reason: str
    steps: list[Step]
    usage: Usage

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, default=str)


FORMAT_ERROR = (
    '[FormatError] no JSON action found. Reply with a thought, then ```json\n{"action": "<tool>", "args": {...}}\n```'
)
LOOP_GUARD = "[LoopGuard] you just made exactly this call with the same result; change tool or arguments, or finish if you know enough"


def build_prompt(task: str, tools: ToolRegistry, trajectory: list[str]) -> str:
    """System prompt + tool specs + task + the whole trajectory, rebuilt from scratch."""
    return f"{SYSTEM_PROMPT}\n\n## Tools\n{tools.render()}\n\n## Task\n{task}\n\n" + "\n\n".join(trajectory)


async def react(
    task: str,
    tools: ToolRegistry,
    *,
    budget: Budget,
    llm: LLMFn,
    confirm: ConfirmFn | None = None,
    obs_limit: int = 1200,
) -> RunResult:
    """The reference main loop: check budget, build context, call the LLM, parse, act, record."""
    usage, steps, trajectory = Usage(), [], []
    errors, previous = 0, None
    while (reason := usage.exhausted(budget)) is None:
        prompt = build_prompt(task, tools, trajectory)
        prompt_tokens = estimate_tokens(prompt)
        usage.prompt_tokens += prompt_tokens
        started = time.monotonic()
        try:
            text = await asyncio.wait_for(llm(prompt), timeout=budget.max_seconds - usage.elapsed())
        except TimeoutError:
            reason = "timeout"
            break
        thought, call = parse_output(text)
        usage.steps += 1
        if call.name == UNPARSABLE:
            observation = FORMAT_ERROR
        elif call.name == FINISH:
            steps.append(Step(usage.steps, thought, call, "", (time.monotonic() - started) * 1000, prompt_tokens))
            return RunResult(True, str(call.args.get("answer", "")), "finish", steps, usage)
        elif call == previous:
            observation = LOOP_GUARD
        else:
            observation = truncate(await tools.dispatch(call, confirm), obs_limit)
        previous = call
        steps.append(Step(usage.steps, thought, call, observation, (time.monotonic() - started) * 1000, prompt_tokens))
        action = json.dumps({"action": call.name, "args": call.args}, ensure_ascii=False)
        trajectory.append(f"Thought: {thought}\nAction: {action}\nObservation: {observation}")
        errors = errors + 1 if observation.startswith(("[ToolError]", "[FormatError]")) else 0
        if errors >= budget.max_consecutive_errors:
            reason = "unparsable_exhausted" if observation.startswith("[FormatError]") else "tool_error_exhausted"
            break
    return RunResult(False, "", reason, steps, usage)
