"""A scored mini-corpus of real model replies by family: core formats, stretch formats, and call-like prose.

The held-out corpus we are measured on is not ours to read; this one is, so the score it gives is reproducible.
Run `python tests/parsing_corpus.py` to print the score (against whatever `kernel` is importable).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from kernel.parsing import parse_output

Calls = tuple[tuple[str, dict[str, Any]], ...]
PROMQL = 'sum(rate(http_requests_total{job="checkout",code=~"5.."}[5m])) by (pod)'


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


def stretch(family: str, reply: str, *calls: tuple[str, dict[str, Any]]) -> Case:
    return Case(family, Tier.STRETCH, reply, calls)


def prose(family: str, reply: str) -> Case:
    return Case(family, Tier.PROSE, reply)


LOGS_A = ("query_logs", {"service": "checkout"})
PODS = ("list_pods", {"namespace": "prod"})
DEPLOYS = ("get_deploy_history", {"service": "checkout"})

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
    # --- stretch: JSON5-like damage ---------------------------------------------------------------------------------
    stretch(
        "json5",
        'Next, the logs.\n```json\n{action: "query_logs", args: {service: "checkout", limit: 50}}\n```',
        ("query_logs", {"service": "checkout", "limit": 50}),
    ),
    stretch(
        "json5",
        "{'action': 'restart_service', 'args': {'service': 'checkout',},}",
        ("restart_service", {"service": "checkout"}),
    ),
    stretch(
        "json5",
        "I will check the logs.\n{“action”: “query_logs”, “args”: {“service”: “checkout”}}",
        LOGS_A,
    ),
    stretch(
        "json5",
        "{“action”: “post_message”, “args”: {“text”: “the pool’s exhausted again”}}",
        ("post_message", {"text": "the pool’s exhausted again"}),
    ),
    stretch("json5", "Pods first: {‘action’: ‘list_pods’, ‘args’: {‘namespace’: ‘prod’}}", PODS),
    stretch(
        "json5",
        '我需要查看日志。\n{"action"："query_logs"，"args"：{"service"："checkout"}}',
        LOGS_A,
    ),
    stretch(
        "json5",
        "先看看部署记录。\n｛“action”：“get_deploy_history”，“args”：｛“service”：“checkout”｝｝",
        DEPLOYS,
    ),
    stretch(
        "json5",
        "{“action”：“post_message”，“args”：{“text”：“回滚完成，错误率恢复正常”}}",
        ("post_message", {"text": "回滚完成，错误率恢复正常"}),
    ),
    stretch(
        "json5",
        'Checking the logs.\n```json\n{"action": "query_logs", "args": {"service": "checkout"}\n```',
        LOGS_A,
    ),
    stretch(
        "json5",
        '```json\n{"action": "query_logs", "args": {"service": "checkout"\n```\nThat should show the errors.',
        LOGS_A,
    ),
    stretch(
        "json5",
        '<tool_call>\n{"name": "list_pods", "arguments": {"namespace": "prod"}\n</tool_call>',
        PODS,
    ),
    stretch(
        "json5",
        '```json\n{\n  // pods first, then logs\n  "action": "list_pods",\n  "args": {"namespace": "prod",},\n}\n```',
        PODS,
    ),
    stretch(
        "json5",
        '{"action": "query_metrics", /* p99 over the incident */ "args": {"query": "histogram_quantile(0.99, x)"}}',
        ("query_metrics", {"query": "histogram_quantile(0.99, x)"}),
    ),
    stretch(
        "json5",
        'Calling it: {\\"action\\": \\"query_logs\\", \\"args\\": {\\"service\\": \\"checkout\\"}}',
        LOGS_A,
    ),
    stretch(
        "json5",
        '<tool_call>{\\"name\\": \\"list_pods\\", \\"arguments\\": {\\"namespace\\": \\"prod\\"}}</tool_call>',
        PODS,
    ),
    stretch(
        "json5",
        'Next: "{\\"action\\": \\"get_deploy_history\\", \\"args\\": {\\"service\\": \\"checkout\\"}}"',
        DEPLOYS,
    ),
    stretch(
        "json5",
        '```json\n"{\\"name\\": \\"query_logs\\", \\"arguments\\": {\\"service\\": \\"checkout\\"}}"\n```',
        LOGS_A,
    ),
    stretch(
        "json5",
        "Looking at logs. {&quot;action&quot;: &quot;query_logs&quot;, &quot;args&quot;: "
        "{&quot;service&quot;: &quot;checkout&quot;}}",
        LOGS_A,
    ),
    stretch(
        "json5",
        "&lt;tool_call&gt;\n{&quot;name&quot;: &quot;list_pods&quot;, &quot;arguments&quot;: "
        "{&quot;namespace&quot;: &quot;prod&quot;}}\n&lt;/tool_call&gt;",
        PODS,
    ),
    stretch(
        "json5", "{&#34;action&#34;: &#34;list_pods&#34;, &#34;args&#34;: {&#34;namespace&#34;: &#34;prod&#34;}}", PODS
    ),
    stretch(
        "json5",
        "<think>Errors spiked; logs next.</think>\n{action: 'query_logs', args: {service: 'checkout', follow: False, since: None,},}",
        ("query_logs", {"service": "checkout", "follow": False, "since": None}),
    ),
    # --- stretch: Functionary -----------------------------------------------------------------------------------------
    stretch(
        "functionary",
        '>>>all\nThe spike lines up with a deploy; checking the history.>>>get_deploy_history\n{"service": "checkout"}',
        DEPLOYS,
    ),
    stretch(
        "functionary",
        'all\nLet me look at the logs first.>>>query_logs\n{"service": "checkout"}',
        LOGS_A,
    ),
    stretch("functionary", 'list_pods\n{"namespace": "prod"}', PODS),
    stretch(
        "functionary",
        '>>>query_logs\n{"service": "checkout"}>>>list_pods\n{"namespace": "prod"}<|eot_id|>',
        LOGS_A,
        PODS,
    ),
    stretch("functionary", '<function=list_pods>{"namespace": "prod"}</function>', PODS),
    stretch(
        "functionary",
        'I will check the pods.\n<function=list_pods>{"namespace": "prod"}</function><|eom_id|>',
        PODS,
    ),
    stretch(
        "functionary",
        "<|from|>assistant\n<|recipient|>all\n<|content|>Checking the logs.\n<|from|>assistant\n"
        '<|recipient|>query_logs\n<|content|>{"service": "checkout"}<|stop|>',
        LOGS_A,
    ),
    # --- stretch: Command R7B / Command R+ ----------------------------------------------------------------------------
    stretch(
        "command-r",
        "<|START_THINKING|>The error rate jumped at 10:02; the deploy history will tell.<|END_THINKING|>"
        '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_deploy_history", "parameters": '
        '{"service": "checkout"}}\n]<|END_ACTION|>',
        DEPLOYS,
    ),
    stretch(
        "command-r",
        '<|START_THINKING|>Pods and logs.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": '
        '"list_pods", "parameters": {"namespace": "prod"}}, {"tool_call_id": "1", "tool_name": "query_logs", '
        '"parameters": {"service": "checkout"}}]<|END_ACTION|>',
        PODS,
        LOGS_A,
    ),
    stretch(
        "command-r",
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "list_pods", "parameters": {"namespace": "prod"}}]<|END_ACTION|>',
        PODS,
    ),
    stretch(
        "command-r",
        'Plan: I will first check the logs.\nAction: ```json\n[\n    {\n        "tool_name": "query_logs",\n'
        '        "parameters": {\n            "service": "checkout"\n        }\n    }\n]\n```',
        LOGS_A,
    ),
    stretch(
        "command-r",
        'Action:\n```json\n[\n    {"tool_name": "list_pods", "parameters": {"namespace": "prod"}},\n'
        '    {"tool_name": "get_deploy_history", "parameters": {"service": "checkout"}}\n]\n```',
        PODS,
        DEPLOYS,
    ),
    stretch(
        "command-r",
        'I will list the pods. [{"tool_call_id": "1", "tool_name": "list_pods", "parameters": {"namespace": "prod"}}]',
        PODS,
    ),
    # --- stretch: FunctionGemma ---------------------------------------------------------------------------------------
    stretch(
        "functiongemma",
        "<start_function_call>call:query_logs{service:<escape>checkout<escape>,limit:50}<end_function_call>",
        ("query_logs", {"service": "checkout", "limit": 50}),
    ),
    stretch(
        "functiongemma",
        f"<start_function_call>call:query_metrics{{query:<escape>{PROMQL}<escape>,window:<escape>30m<escape>}}"
        "<end_function_call>",
        ("query_metrics", {"query": PROMQL, "window": "30m"}),
    ),
    stretch(
        "functiongemma",
        "<start_function_call>call:list_pods{namespace:<escape>prod<escape>}<end_function_call>"
        "<start_function_call>call:query_logs{service:<escape>checkout<escape>}<end_function_call>",
        PODS,
        LOGS_A,
    ),
    stretch(
        "functiongemma",
        "<start_function_call>call:restart_service{services:[<escape>api<escape>,<escape>web<escape>],force:false}"
        "<end_function_call>",
        ("restart_service", {"services": ["api", "web"], "force": False}),
    ),
    stretch("functiongemma", "<start_function_call>call:list_pods{}<end_function_call>", ("list_pods", {})),
    stretch(
        "functiongemma",
        "<start_function_call>call:post_message{text:<escape>Rollback done, errors back to 0.1%<escape>}"
        "<end_function_call><start_function_response>",
        ("post_message", {"text": "Rollback done, errors back to 0.1%"}),
    ),
    # --- stretch: JS-style calls --------------------------------------------------------------------------------------
    stretch(
        "js-call",
        'Checking the error logs.\nquery_logs({service: "checkout", since: "15m"})',
        ("query_logs", {"service": "checkout", "since": "15m"}),
    ),
    stretch(
        "js-call",
        'Per-pod rate next.\n```javascript\nquery_metrics({query: "rate(http_requests_total[5m])"})\n```',
        ("query_metrics", {"query": "rate(http_requests_total[5m])"}),
    ),
    stretch("js-call", 'get_deploy_history({"service": "checkout"})', DEPLOYS),
    stretch("js-call", "```js\nawait list_pods({namespace: 'prod'});\n```", PODS),
    stretch(
        "js-call",
        'The pod is in an OOM loop.\nrestart_service({\n  service: "checkout",\n  reason: "OOM loop",\n})',
        ("restart_service", {"service": "checkout", "reason": "OOM loop"}),
    ),
    stretch(
        "js-call",
        '```ts\nlist_pods({namespace: "prod"});\nquery_logs({service: "checkout"});\n```',
        PODS,
        LOGS_A,
    ),
    stretch("js-call", '<think>Logs.</think>\nfunctions.query_logs({"service": "checkout"})', LOGS_A),
    # --- stretch: LFM2 --------------------------------------------------------------------------------------------------
    stretch(
        "lfm2",
        '<|tool_call_start|>[query_logs(service="checkout", limit=20)]<|tool_call_end|>',
        ("query_logs", {"service": "checkout", "limit": 20}),
    ),
    stretch(
        "lfm2",
        '<|tool_call_start|>[list_pods(namespace="prod")]<|tool_call_end|>Checking the pods now.',
        PODS,
    ),
    stretch(
        "lfm2",
        '<|tool_call_start|>[list_pods(namespace="prod"), get_deploy_history(service="checkout")]<|tool_call_end|>',
        PODS,
        DEPLOYS,
    ),
    stretch(
        "lfm2",
        "<think>The alert names checkout; its logs come first.</think>"
        '<|tool_call_start|>[query_logs(service="checkout")]<|tool_call_end|>',
        LOGS_A,
    ),
    stretch(
        "lfm2",
        '<|tool_call_start|>[{"name": "query_logs", "arguments": {"service": "checkout"}}]<|tool_call_end|>',
        LOGS_A,
    ),
    stretch("lfm2", 'I will check the deploy history first.\n[get_deploy_history(service="checkout")]', DEPLOYS),
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
