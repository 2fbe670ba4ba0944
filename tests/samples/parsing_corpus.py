"""A scored mini-corpus of real model replies by family: core formats, stretch formats, and call-like prose.

The held-out corpus we are measured on is not ours to read; this one is, so the score it gives is reproducible.
The first batch was written before the parser learned these families (it scored stretch 9/53 then); a second batch
was written after and added untuned. `PYTHONPATH=.:tests python tests/samples/parsing_corpus.py` prints the score
against whatever `kernel` is importable.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from kernel import parse_output
from samples.parsing_corpus_stretch import DEPLOYS, LOGS_A, PODS, PROMQL, STRETCH

Calls = tuple[tuple[str, dict[str, Any]], ...]


class Tier(Enum):
    """Core: the formats the parser is built around. Stretch: other families and damaged JSON. Prose: no call."""

    CORE = "core"
    STRETCH = "stretch"
    PROSE = "prose"


@dataclass(frozen=True)
class Case:
    family: str
    tier: Tier
    reply: str
    calls: Calls = ()


def core(family: str, reply: str, *calls: tuple[str, dict[str, Any]]) -> Case:
    return Case(family, Tier.CORE, reply, calls)


def prose(family: str, reply: str) -> Case:
    return Case(family, Tier.PROSE, reply)


CORPUS: tuple[Case, ...] = (
    # --- core: our own protocol and the families the parser was built around ---------------------------------------
    core(
        "canonical",
        "Known: checkout 5xx rose at 10:02 (step 1).\nMissing: which pod.\nWhy: per-pod error rate isolates it.\n"
        '```json\n{"action": "query_metrics", "args": {"query": "' + PROMQL.replace('"', '\\"') + '"}}\n```',
        ("query_metrics", {"query": PROMQL}),
    ),
    core(
        "canonical",
        'Thought: the deploy at 10:01 is the prime suspect.\n```json\n{"action": "get_deploy_history", "args": '
        '{"service": "checkout"}}\n```',
        DEPLOYS,
    ),
    core(
        "canonical",
        "Enough evidence.\n```json\n"
        '{"action": "finish", "args": {"answer": "Root cause: pool exhausted after deploy 4f2a (steps 2-3)."}}\n```',
        ("finish", {"answer": "Root cause: pool exhausted after deploy 4f2a (steps 2-3)."}),
    ),
    core(
        "bare-json",
        'The deploy is suspicious. {"action": "get_deploy_history", "args": {"service": "checkout"}} That shows it.',
        DEPLOYS,
    ),
    core(
        "hermes",
        "<think>\nThe alert says checkout. Logs first.\n</think>\n\n<tool_call>\n"
        '{"name": "query_logs", "arguments": {"service": "checkout"}}\n</tool_call>',
        LOGS_A,
    ),
    core(
        "hermes",
        '<tool_call>\n{"name": "list_pods", "arguments": {"namespace": "prod"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "query_logs", "arguments": {"service": "checkout"}}\n</tool_call>',
        PODS,
        LOGS_A,
    ),
    core(
        "mistral",
        '[TOOL_CALLS] [{"name": "list_pods", "arguments": {"namespace": "prod"}, "id": "a1b2c3d4e"}]</s>',
        PODS,
    ),
    core("mistral", '[TOOL_CALLS]query_logs[ARGS]{"service": "checkout"}', LOGS_A),
    core("llama3", '<|python_tag|>{"name": "list_pods", "parameters": {"namespace": "prod"}}<|eom_id|>', PODS),
    core("llama3", '[query_logs(service="checkout"), list_pods(namespace="prod")]', LOGS_A, PODS),
    core(
        "react",
        'Thought: I need the error logs.\nAction: query_logs\nAction Input: {"service": "checkout"}',
        LOGS_A,
    ),
    core(
        "react",
        "Thought: I now know the final answer.\nFinal Answer: The checkout DB pool is exhausted (step 2).",
        ("finish", {"answer": "The checkout DB pool is exhausted (step 2)."}),
    ),
    core(
        "langchain",
        'Thought: query.\nAction:\n```json\n{"action": "list_pods", "action_input": {"namespace": "prod"}}\n```',
        PODS,
    ),
    core(
        "deepseek",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>query_logs\n```json\n"
        '{"service": "checkout"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        LOGS_A,
    ),
    core(
        "qwen3-coder",
        "<tool_call>\n<function=list_pods>\n<parameter=namespace>\nprod\n</parameter>\n</function>\n</tool_call>",
        PODS,
    ),
    core(
        "harmony",
        "<|channel|>analysis<|message|>Need the logs.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.query_logs <|constrain|>json<|message|>{"service": "checkout"}<|call|>',
        LOGS_A,
    ),
    core("gemma", 'Checking.\n```tool_code\nprint(default_api.list_pods(namespace="prod"))\n```', PODS),
    core("granite", '<|tool_call|>[{"name": "list_pods", "arguments": {"namespace": "prod"}}]', PODS),
    core(
        "kimi",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.list_pods:0<|tool_call_argument_begin|>"
        '{"namespace": "prod"}<|tool_call_end|><|tool_calls_section_end|>',
        PODS,
    ),
    core(
        "python-dict",
        "{'action': 'list_pods', 'args': {'namespace': 'prod', 'all': True}}",
        ("list_pods", {"namespace": "prod", "all": True}),
    ),
    *(Case(family, Tier.STRETCH, reply, calls) for family, reply, calls in STRETCH),
    # --- prose that looks like a call: must never yield one -----------------------------------------------------------
    prose("call-like", "I will call query_metrics(service) next, once the logs are in."),
    prose("call-like", 'Next I would run query_logs({service: "checkout"}) but first the time window.'),
    prose("call-like", 'I considered `restart_service({service: "checkout"})`, but the evidence does not support it.'),
    prose("call-like", 'The arguments would look like {"service": "checkout", "window": "5m"} for that query.'),
    prose(
        "call-like",
        'Evidence, from the log: {"level": "error", "action": "restart", "pod": "checkout-7d9f", "ts": "10:02:11"}. '
        "The restart was automatic.",
    ),
    prose("call-like", "In the runbook:\n```\n>>> import requests\n>>> requests.get(url)\n```\nThat is the check."),
    prose("call-like", "all\nThe pods are healthy and the error rate is back to normal."),
    prose(
        "call-like", "The docs show call:get_weather{location:<escape>Paris<escape>} as the format; not needed here."
    ),
    prose("call-like", "“The pool is exhausted,” the on-call wrote, ‘again’ — that matches step 3."),
    prose("call-like", "结论：数据库连接池耗尽，建议扩容。“重启”不能解决问题。"),
    prose(
        "call-like",
        "```js\nconst res = await fetch(url);\nconsole.log({status: res.status});\n```\nThe client logs the status.",
    ),
    prose("call-like", "console.log({status: 503})\nThat line printed the 503s."),
    prose(
        "call-like", "The page showed {&quot;status&quot;: &quot;degraded&quot;, &quot;since&quot;: &quot;10:02&quot;}."
    ),
    prose("call-like", 'A call has the shape {"action": "<tool name>", "args": {...}}; I have not chosen one yet.'),
    prose("call-like", "See [the runbook](https://wiki/runbooks/checkout) and [restart(now)](https://wiki/restart)."),
    prose("call-like", "Grounded answer: the checkout DB pool is exhausted; raise max_connections."),
    prose("call-like", 'The webhook body was {\\"status\\": \\"ok\\", \\"attempt\\": 3}, so delivery worked.'),
    prose(
        "call-like",
        '<think>Maybe list_pods({namespace: "prod"})?</think>\nThe evidence is enough: the DB is down.',
    ),
    prose("call-like", "The timeline was [deploy(at=10), rollback(at=11)] in the incident doc."),
    prose("call-like", "```python\nclient.query(service='checkout')\n```\nThat is how the exporter queries."),
    prose("call-like", "Action items: restart the pods, then watch the logs for ten minutes."),
    prose("call-like", 'Use a selector like {job="checkout"} or ｛job：checkout｝ in the dashboard.'),
    # the second batch, written after the parser work
    prose("call-like", "To query, I'd use something like query_logs({service}) later."),
    prose("call-like", 'The pattern `[restart_service(service="x")]` is what LFM2 emits.'),
    prose("call-like", "Summary: {“root_cause”: “pool exhausted”, “confidence”: “high”}"),
    prose("call-like", ">>> 2 + 2\n4"),
    prose("call-like", "<start_of_turn>model\nThe DB is fine."),
    prose("call-like", "I could restart it:\nrestart_service(service)\nbut not yet."),
)


@dataclass(frozen=True)
class Score:
    tier: Tier
    passed: int
    total: int

    @property
    def percent(self) -> float:
        return 100.0 * self.passed / self.total if self.total else 100.0


def parsed_calls(reply: str) -> Calls:
    return tuple((call.name, call.args) for call in parse_output(reply).calls)


def false_calls(case: Case) -> list[str]:
    """Calls read from the reply whose name the reply never asked for: the worst outcome."""
    wanted = {name for name, _ in case.calls}
    return [name for name, _ in parsed_calls(case.reply) if name not in wanted]


def failures(tier: Tier) -> list[Case]:
    return [case for case in CORPUS if case.tier is tier and parsed_calls(case.reply) != case.calls]


def score(tier: Tier) -> Score:
    total = sum(case.tier is tier for case in CORPUS)
    return Score(tier, total - len(failures(tier)), total)


if __name__ == "__main__":
    for tier in Tier:
        result = score(tier)
        print(f"{tier.value:8} {result.passed}/{result.total} = {result.percent:.1f}%")
        for case in failures(tier):
            print(f"    FAIL {case.family}: {case.reply[:90]!r} -> {parsed_calls(case.reply)}")
    print("false calls:", sum(len(false_calls(case)) for case in CORPUS))
