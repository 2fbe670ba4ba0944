"""Tests for the text-protocol parser: every family of reply a model writes without native tool calling."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kernel.calls import FINISH_TOOL, ToolCall
from kernel.parsing.call_blocks import (
    BAD_ACTION_PROBLEM,
    MARKUP_PROBLEM,
    NO_TOOL_PROBLEM,
    THINK_ONLY_PROBLEM,
    TRUNCATED_PROBLEM,
)
from kernel.parsing.lenient_json import LenientJSONError, load_lenient, match_closing, scan_spans
from kernel.parsing.reply import ParsedOutput, parse_output

PROMQL = 'sum(rate(http_requests_total{job="checkout",code=~"5.."}[5m])) by (pod)'
LOGQL = '{app="checkout"} |= "error" | json | level="error"'
INVOKE, PARAM = "invoke", "parameter"  # Anthropic's XML call format, spelled out in the cases below

Calls = list[tuple[str, dict[str, Any]]]


def calls_of(parsed: ParsedOutput) -> Calls:
    return [(call.name, call.args) for call in parsed.calls]


def fenced(obj: Any, lang: str = "json") -> str:
    return f"```{lang}\n{json.dumps(obj, indent=2)}\n```"


# (id, reply, expected calls, expected thought)
PROTOCOL_CASES: list[tuple[str, str, Calls, str]] = [
    (
        "fenced-json-protocol",
        "Known: checkout 5xx rose at 10:02 (step 1).\nMissing: which pod.\nWhy: per-pod error rate isolates it.\n"
        + fenced({"action": "query_metrics", "args": {"query": PROMQL}}),
        [("query_metrics", {"query": PROMQL})],
        "Known: checkout 5xx rose at 10:02 (step 1).\nMissing: which pod.\nWhy: per-pod error rate isolates it.",
    ),
    (
        "plain-fence",
        'I will read the logs.\n```\n{"action": "query_logs", "args": {"query": "'
        + LOGQL.replace('"', '\\"')
        + '"}}\n```',
        [("query_logs", {"query": LOGQL})],
        "I will read the logs.",
    ),
    (
        "bare-json-in-prose",
        'The deploy at 10:01 is suspicious. {"action": "get_deploy_history", "args": {"service": "checkout"}} '
        "That shows the rollout.",
        [("get_deploy_history", {"service": "checkout"})],
        "The deploy at 10:01 is suspicious.",
    ),
    (
        "inline-fence",
        'Checking pods ```json {"action": "list_pods", "args": {"namespace": "prod"}} ```',
        [("list_pods", {"namespace": "prod"})],
        "Checking pods",
    ),
    (
        "thought-label-stripped",
        'Thought: the error budget burns fast.\nAction:\n```json\n{"action": "query_metrics", "args": {}}\n```',
        [("query_metrics", {})],
        "the error budget burns fast.",
    ),
    (
        "finish",
        'Enough evidence.\n```json\n{"action": "finish", "args": {"answer": "Root cause: bad config (step 2)."}}\n```',
        [(FINISH_TOOL, {"answer": "Root cause: bad config (step 2)."})],
        "Enough evidence.",
    ),
    (
        "finish-answer-holds-a-code-fence",
        "Done.\n"
        + fenced({"action": "finish", "args": {"answer": "Roll back:\n```bash\nkubectl rollout undo deploy/x\n```"}}),
        [(FINISH_TOOL, {"answer": "Roll back:\n```bash\nkubectl rollout undo deploy/x\n```"})],
        "Done.",
    ),
    (
        "raw-newline-inside-string",
        '{"action": "finish", "args": {"answer": "Cause: OOM.\nEvidence: step 3."}}',
        [(FINISH_TOOL, {"answer": "Cause: OOM.\nEvidence: step 3."})],
        "",
    ),
    (
        "carried-thought-key",
        '{"thought": "need the error rate", "action": "query_metrics", "args": {"service": "api"}}',
        [("query_metrics", {"service": "api"})],
        "need the error rate",
    ),
    (
        "flat-arguments-beside-action",
        'Next:\n{"action": "get_pod", "id": "checkout-7d9f", "namespace": "prod"}',
        [("get_pod", {"id": "checkout-7d9f", "namespace": "prod"})],
        "Next:",
    ),
    (
        "several-fences-in-order",
        "Two checks.\n"
        + fenced({"action": "query_logs", "args": {"service": "a"}})
        + "\nand\n"
        + fenced({"action": "query_logs", "args": {"service": "b"}}),
        [("query_logs", {"service": "a"}), ("query_logs", {"service": "b"})],
        "Two checks.",
    ),
    (
        "echoed-fence-counts-once",
        fenced({"action": "list_pods", "args": {}}) + "\nRepeating it:\n" + fenced({"action": "list_pods", "args": {}}),
        [("list_pods", {})],
        "",
    ),
    (
        "fence-wins-over-bare-echo",
        'Calling {"action": "list_pods", "args": {}} now:\n```json\n{"action": "query_logs", "args": {}}\n```',
        [("query_logs", {})],
        'Calling {"action": "list_pods", "args": {}} now:',
    ),
    (
        "bare-json-holding-backticks",
        'Posting the fix: {"action": "post_message", "args": {"text": "Run ```kubectl rollout undo```"}}',
        [("post_message", {"text": "Run ```kubectl rollout undo```"})],
        "Posting the fix:",
    ),
    (
        "unescaped-quotes-in-argument",
        '{"action": "query_logs", "args": {"query": "{app="checkout"} |= "timeout""}}',
        [("query_logs", {"query": '{app="checkout"} |= "timeout"'})],
        "",
    ),
]

KEY_VARIANT_CASES: list[tuple[str, str, Calls]] = [
    ("tool-arguments", '{"tool": "list_pods", "arguments": {"ns": "a"}}', [("list_pods", {"ns": "a"})]),
    ("name-parameters-llama", '{"name": "list_pods", "parameters": {"ns": "a"}}', [("list_pods", {"ns": "a"})]),
    ("llama-type-function", '{"type": "function", "name": "list_pods", "parameters": {}}', [("list_pods", {})]),
    ("tool-name", '{"tool_name": "list_pods", "input": {"ns": "a"}}', [("list_pods", {"ns": "a"})]),
    ("function-string", '{"function": "list_pods", "arguments": {"ns": "a"}}', [("list_pods", {"ns": "a"})]),
    (
        "openai-function-wrapper",
        '{"function": {"name": "list_pods", "arguments": "{\\"ns\\": \\"a\\"}"}}',
        [("list_pods", {"ns": "a"})],
    ),
    (
        "openai-tool-call-object",
        '{"id": "call_9", "type": "function", "function": {"name": "functions.list_pods", "arguments": "{}"}}',
        [("list_pods", {})],
    ),
    (
        "openai-message-leak",
        '{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", '
        '"function": {"name": "list_pods", "arguments": "{\\"ns\\": \\"a\\"}"}}]}',
        [("list_pods", {"ns": "a"})],
    ),
    (
        "gpt-multi-tool-use",
        '{"tool_uses": [{"recipient_name": "functions.list_pods", "parameters": {}}, '
        '{"recipient_name": "functions.query_logs", "parameters": {"service": "a"}}]}',
        [("list_pods", {}), ("query_logs", {"service": "a"})],
    ),
    (
        "gemini-function-call",
        '{"functionCall": {"name": "list_pods", "args": {"ns": "a"}}}',
        [("list_pods", {"ns": "a"})],
    ),
    (
        "anthropic-tool-use-block",
        '{"type": "tool_use", "id": "toolu_01", "name": "query_logs", "input": {"service": "a"}}',
        [("query_logs", {"service": "a"})],
    ),
    (
        "autogpt-command",
        '{"thoughts": {"text": "look at logs"}, "command": {"name": "query_logs", "args": {"service": "a"}}}',
        [("query_logs", {"service": "a"})],
    ),
    ("action-input", '{"action": "query_logs", "action_input": {"service": "a"}}', [("query_logs", {"service": "a"})]),
    (
        "Action-Input-spaced",
        '{"Action": "query_logs", "Action Input": {"service": "a"}}',
        [("query_logs", {"service": "a"})],
    ),
    (
        "args-json-string",
        '{"action": "query_logs", "args": "{\\"service\\": \\"a\\"}"}',
        [("query_logs", {"service": "a"})],
    ),
    ("args-plain-string", '{"action": "query_logs", "args": "checkout"}', [("query_logs", {"_raw": "checkout"})]),
    ("args-list", '{"action": "query_logs", "args": ["a", "b"]}', [("query_logs", {"_raw": ["a", "b"]})]),
    ("args-string-of-list", '{"action": "query_logs", "args": "[1, 2]"}', [("query_logs", {"_raw": [1, 2]})]),
    ("args-null", '{"action": "list_pods", "args": null}', [("list_pods", {})]),
    ("args-missing", '{"action": "list_pods"}', [("list_pods", {})]),
    ("name-arguments-not-json", '{"name": "query_logs", "arguments": "tail"}', [("query_logs", {"_raw": "tail"})]),
    ("name-backticks-and-space", '{"action": " `query_logs` ", "args": {}}', [("query_logs", {})]),
    ("name-case-kept", '{"action": "QueryLogs", "args": {}}', [("QueryLogs", {})]),
    ("name-default-api-prefix", '{"name": "default_api.query_logs", "arguments": {}}', [("query_logs", {})]),
    ("odd-name-kept-for-caller", '{"action": "query logs", "args": {}}', [("query logs", {})]),
    (
        "python-dict",
        "{'action': 'query_logs', 'args': {'service': 'a', 'follow': True, 'since': None}}",
        [("query_logs", {"service": "a", "follow": True, "since": None})],
    ),
    ("trailing-commas", '{"action": "query_logs", "args": {"service": "a",},}', [("query_logs", {"service": "a"})]),
    (
        "unquoted-keys",
        '{action: "query_logs", args: {service: "a", limit: 5}}',
        [("query_logs", {"service": "a", "limit": 5})],
    ),
    (
        "final-answer-action",
        '{"action": "Final Answer", "action_input": "The DB is down."}',
        [(FINISH_TOOL, {"answer": "The DB is down."})],
    ),
    (
        "finish-bare-answer-args",
        '{"action": "finish", "args": "The DB is down."}',
        [(FINISH_TOOL, {"answer": "The DB is down."})],
    ),
    ("finish-answer-alias", '{"action": "finish", "args": {"final_answer": "DB"}}', [(FINISH_TOOL, {"answer": "DB"})]),
    ("final-answer-key", '{"final_answer": "The DB is down."}', [(FINISH_TOOL, {"answer": "The DB is down."})]),
    ("answer-key-alone", '{"answer": "The DB is down."}', [(FINISH_TOOL, {"answer": "The DB is down."})]),
    (
        "json-array-of-calls",
        '[{"name": "list_pods", "arguments": {}}, {"name": "query_logs", "arguments": {"service": "a"}}]',
        [
            ("list_pods", {}),
            ("query_logs", {"service": "a"}),
        ],
    ),
    (
        "command-r-list",
        '[{"tool_name": "query_logs", "parameters": {"service": "a"}}]',
        [("query_logs", {"service": "a"})],
    ),
]

MARKUP_CASES: list[tuple[str, str, Calls, str]] = [
    (
        "hermes-tool-call",
        'Let me check.\n<tool_call>\n{"name": "query_logs", "arguments": {"service": "a"}}\n</tool_call>',
        [("query_logs", {"service": "a"})],
        "Let me check.",
    ),
    (
        "hermes-several-and-unclosed-last",
        '<tool_call>\n{"name": "list_pods", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "query_logs", "arguments": {"service": "a"}}',
        [("list_pods", {}), ("query_logs", {"service": "a"})],
        "",
    ),
    (
        "hermes-python-dict",
        "<tool_call>\n{'arguments': {'service': 'a'}, 'name': 'query_logs'}\n</tool_call>",
        [("query_logs", {"service": "a"})],
        "",
    ),
    ("hermes-name-only", '<tool_call>{"name": "list_pods"}</tool_call>', [("list_pods", {})], ""),
    (
        "mistral-array",
        '[TOOL_CALLS] [{"name": "list_pods", "arguments": {"ns": "a"}, "id": "a1b2c3d4e"}]</s>',
        [("list_pods", {"ns": "a"})],
        "",
    ),
    ("mistral-object", '[TOOL_CALLS]{"name": "list_pods", "arguments": {}}', [("list_pods", {})], ""),
    (
        "mistral-args-format",
        '[TOOL_CALLS]list_pods[ARGS]{"ns": "a"}[TOOL_CALLS]query_logs[CALL_ID]x1y2z3a4b[ARGS]{"service": "b"}',
        [("list_pods", {"ns": "a"}), ("query_logs", {"service": "b"})],
        "",
    ),
    (
        "llama-python-tag-json",
        '<|python_tag|>{"name": "query_logs", "parameters": {"service": "a"}}<|eom_id|>',
        [("query_logs", {"service": "a"})],
        "",
    ),
    (
        "llama-python-tag-builtin",
        '<|python_tag|>brave_search.call(query="checkout outage")<|eom_id|>',
        [("brave_search", {"query": "checkout outage"})],
        "",
    ),
    (
        "llama-pythonic-list",
        '[list_pods(namespace="prod"), query_logs(service="a", limit=20)]',
        [("list_pods", {"namespace": "prod"}), ("query_logs", {"service": "a", "limit": 20})],
        "",
    ),
    (
        "llama4-python-start",
        '<|python_start|>query_logs(service="a")<|python_end|>',
        [("query_logs", {"service": "a"})],
        "",
    ),
    (
        "internlm-plugin",
        '<|action_start|><|plugin|>\n{"name": "query_logs", "parameters": {"service": "a"}}<|action_end|>',
        [("query_logs", {"service": "a"})],
        "",
    ),
    (
        "llama-function-tag",
        'I need pods.\n<function=list_pods>{"namespace": "prod"}</function>',
        [("list_pods", {"namespace": "prod"})],
        "I need pods.",
    ),
    ("functools", 'functools[{"name": "list_pods", "arguments": {"ns": "a"}}]', [("list_pods", {"ns": "a"})], ""),
    ("granite-tool-call-token", '<|tool_call|>[{"name": "list_pods", "arguments": {}}]', [("list_pods", {})], ""),
    (
        "qwen3-coder-xml",
        "<tool_call>\n<function=query_logs>\n<parameter=service>\ncheckout\n</parameter>\n"
        "<parameter=limit>\n50\n</parameter>\n</function>\n</tool_call>",
        [("query_logs", {"service": "checkout", "limit": 50})],
        "",
    ),
    (
        "glm-arg-key",
        "<tool_call>query_logs\n<arg_key>service</arg_key>\n<arg_value>checkout</arg_value>\n</tool_call>",
        [("query_logs", {"service": "checkout"})],
        "",
    ),
    (
        "anthropic-xml-invoke",
        f'Looking.\n<function_calls>\n<{INVOKE} name="query_logs">\n<{PARAM} name="service">checkout</{PARAM}>\n'
        f'<{PARAM} name="limit">20</{PARAM}>\n</{INVOKE}>\n</function_calls>',
        [("query_logs", {"service": "checkout", "limit": 20})],
        "Looking.",
    ),
    (
        "deepseek-tokens",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>query_logs\n```json\n"
        '{"service": "a"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [("query_logs", {"service": "a"})],
        "",
    ),
    (
        "deepseek-v31-tokens",
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>list_pods<｜tool▁sep｜>{"ns": "a"}<｜tool▁call▁end｜>',
        [("list_pods", {"ns": "a"})],
        "",
    ),
    (
        "kimi-tokens",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.list_pods:0<|tool_call_argument_begin|>"
        '{"ns": "a"}<|tool_call_end|><|tool_calls_section_end|>',
        [("list_pods", {"ns": "a"})],
        "",
    ),
    (
        "harmony-commentary",
        "<|channel|>analysis<|message|>Need the logs.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.query_logs <|constrain|>json<|message|>{"service": "a"}<|call|>',
        [("query_logs", {"service": "a"})],
        "Need the logs.",
    ),
    (
        "gemma-tool-code-fence",
        'Checking.\n```tool_code\nprint(default_api.query_logs(service="a"))\n```',
        [("query_logs", {"service": "a"})],
        "Checking.",
    ),
]

THINK_CASES: list[tuple[str, str, Calls, str]] = [
    (
        "call-after-think",
        '<think>\nErrors rose; maybe {"action": "restart_service", "args": {}}? No, look first.\n</think>\n\n'
        "Read the logs first.\n" + fenced({"action": "query_logs", "args": {"service": "a"}}),
        [("query_logs", {"service": "a"})],
        "Read the logs first.",
    ),
    (
        "thought-falls-back-to-think-content",
        "<think>The pods restart in a loop.</think>\n" + fenced({"action": "list_pods", "args": {}}),
        [("list_pods", {})],
        "The pods restart in a loop.",
    ),
    (
        "thinking-tag",
        "<thinking>Check memory.</thinking>\n" + fenced({"action": "query_metrics", "args": {}}),
        [("query_metrics", {})],
        "Check memory.",
    ),
    (
        "stray-close-r1",
        'The spike matches the deploy; {"action": "rollback"} would be premature.\n</think>\n\n'
        + fenced({"action": "get_deploy_history", "args": {}}),
        [("get_deploy_history", {})],
        'The spike matches the deploy; {"action": "rollback"} would be premature.',
    ),
    (
        "only-think-is-read",
        '<think>I should list pods.\n{"action": "list_pods", "args": {}}</think>',
        [("list_pods", {})],
        "I should list pods.",
    ),
    (
        "unclosed-think-only",
        '<think>Let me call {"action": "list_pods", "args": {}}',
        [("list_pods", {})],
        "Let me call",
    ),
]

REACT_CASES: list[tuple[str, str, Calls, str]] = [
    (
        "react-json-input",
        'Thought: I need the error logs.\nAction: query_logs\nAction Input: {"service": "checkout", "query": "'
        + LOGQL.replace('"', '\\"')
        + '"}',
        [("query_logs", {"service": "checkout", "query": LOGQL})],
        "I need the error logs.",
    ),
    (
        "react-python-dict-input",
        "Thought: pods?\nAction: list_pods\nAction Input: {'namespace': 'prod', 'all': True}",
        [("list_pods", {"namespace": "prod", "all": True})],
        "pods?",
    ),
    (
        "react-bare-string-input",
        "Thought: search.\nAction: search_runbooks\nAction Input: checkout timeouts\nObservation:",
        [("search_runbooks", {"_raw": "checkout timeouts"})],
        "search.",
    ),
    (
        "react-logql-bare-input",
        f"Action: query_logs\nAction Input: {LOGQL}",
        [("query_logs", {"_raw": LOGQL})],
        "",
    ),
    (
        "react-arguments-label",
        'Action: query_logs\nArguments: {"service": "a"}',
        [("query_logs", {"service": "a"})],
        "",
    ),
    ("react-missing-input", "Thought: list them.\nAction: list_pods", [("list_pods", {})], "list them."),
    (
        "react-fenced-input",
        'Action: query_logs\nAction Input:\n```json\n{"service": "a"}\n```',
        [("query_logs", {"service": "a"})],
        "",
    ),
    (
        "react-unlabelled-json-input",
        'Action: query_logs\n```json\n{"service": "a"}\n```',
        [("query_logs", {"service": "a"})],
        "",
    ),
    (
        "react-hallucinated-observation",
        'Thought: check.\nAction: query_logs\nAction Input: {"service": "a"}\nObservation: 500 errors\n'
        'Thought: restart.\nAction: restart_service\nAction Input: {"service": "a"}\nObservation: ok\n'
        "Final Answer: fixed",
        [("query_logs", {"service": "a"})],
        "check.",
    ),
    (
        "react-final-answer",
        "Thought: I now know the final answer.\nFinal Answer: The checkout DB pool is exhausted (step 2).",
        [(FINISH_TOOL, {"answer": "The checkout DB pool is exhausted (step 2)."})],
        "I now know the final answer.",
    ),
    (
        "react-final-answer-first-wins",
        'Final Answer: It was the deploy.\nAction: query_logs\nAction Input: {"service": "a"}',
        [(FINISH_TOOL, {"answer": 'It was the deploy.\nAction: query_logs\nAction Input: {"service": "a"}'})],
        "",
    ),
    (
        "react-action-first-wins",
        'Action: query_logs\nAction Input: {"service": "a"}\nFinal Answer: It was the deploy.',
        [("query_logs", {"service": "a"})],
        "",
    ),
    (
        "react-summary-then-finish-block",
        "Final Answer:\nThe DB is down.\n" + fenced({"action": "finish", "args": {"answer": "The DB is down."}}),
        [(FINISH_TOOL, {"answer": "The DB is down."})],
        "The DB is down.",
    ),
    (
        "react-bracket-arg",
        "Action: search_runbooks[checkout timeouts]",
        [("search_runbooks", {"_raw": "checkout timeouts"})],
        "",
    ),
    (
        "react-call-syntax",
        'Action: query_metrics(service="checkout", window="30m")',
        [("query_metrics", {"service": "checkout", "window": "30m"})],
        "",
    ),
    (
        "react-numbered-finish",
        "Thought 4: done.\nAction 4: Finish[the DB pool]",
        [(FINISH_TOOL, {"answer": "the DB pool"})],
        "done.",
    ),
    (
        "react-markdown-bold",
        '**Thought:** need data\n**Action:** `query_metrics`\n**Action Input:** {"service": "a"}',
        [("query_metrics", {"service": "a"})],
        "need data",
    ),
    (
        "react-functions-prefix",
        "Action: functions.list_pods\nAction Input: {}",
        [("list_pods", {})],
        "",
    ),
    (
        "langchain-json-agent",
        'Thought: query.\nAction:\n```json\n{"action": "query_logs", "action_input": {"service": "a"}}\n```',
        [("query_logs", {"service": "a"})],
        "query.",
    ),
    (
        "langchain-json-final",
        'Thought: I know.\n```json\n{"action": "Final Answer", "action_input": "It was DNS."}\n```',
        [(FINISH_TOOL, {"answer": "It was DNS."})],
        "I know.",
    ),
    (
        "react-finish-text-input",
        "Action: finish\nAction Input: The root cause is X.",
        [(FINISH_TOOL, {"answer": "The root cause is X."})],
        "",
    ),
]

NO_CALL_CASES: list[tuple[str, str, str]] = [
    ("pure-prose", "I will query the metrics next.", ""),
    ("empty", "", ""),
    ("whitespace", "  \n\t ", ""),
    ("prose-with-braces-in-code", "Use the selector `{job=api}` next time; it's broken.", ""),
    ("quoted-log-line", 'The log says {"level": "error", "msg": "pool exhausted", "ts": "10:02"}.', ""),
    ("fenced-object-without-tool", 'Next:\n```json\n{"service": "checkout", "window": "5m"}\n```', NO_TOOL_PROBLEM),
    (
        "audit-log-with-action-key",
        'Audit: {"level": "info", "action": "scale", "user": "bob", "timestamp": "10:00"}',
        NO_TOOL_PROBLEM,
    ),
    ("name-is-data", 'The deployment: {"name": "order-service", "replicas": 3}', NO_TOOL_PROBLEM),
    ("container-spec", '{"name": "app", "image": "nginx:1.25", "args": ["--port", "80"]}', NO_TOOL_PROBLEM),
    (
        "tool-schema-echo",
        '{"name": "query_logs", "description": "Search logs", "parameters": {"type": "object", "properties": {}}}',
        NO_TOOL_PROBLEM,
    ),
    (
        "data-array",
        'Pods: [{"name": "api-1", "status": "Running"}, {"name": "api-2", "status": "Failed"}]',
        NO_TOOL_PROBLEM,
    ),
    ("answer-with-data", '{"answer": "42", "sources": ["a", "b"]}', NO_TOOL_PROBLEM),
    ("template-placeholder", '{"action": "<tool name>", "args": {"<argument>": "<value>"}}', NO_TOOL_PROBLEM),
    (
        "think-only-call-with-prose-outside",
        '<think>maybe {"action": "restart_service", "args": {"service": "a"}}</think>I will wait for more data.',
        THINK_ONLY_PROBLEM,
    ),
    ("truncated-fence", 'Next:\n```json\n{"action": "query_logs", "args": {"service": "chec', TRUNCATED_PROBLEM),
    ("truncated-bare", 'Next: {"action": "query_logs", "args": {"query": "sum(rate(x[5m]))"', TRUNCATED_PROBLEM),
    ("truncated-tool-call", '<tool_call>\n{"name": "query_logs", "arguments": {"service": "a"', TRUNCATED_PROBLEM),
    ("truncated-action-input", 'Action: query_logs\nAction Input: {"service": "a", "limit":', TRUNCATED_PROBLEM),
    ("truncated-inline-action-args", 'Action: query_logs {"service": "a", "limit":', TRUNCATED_PROBLEM),
    ("action-line-is-prose", "Action: look at the logs for checkout", BAD_ACTION_PROBLEM),
    ("action-none", "Thought: enough.\nAction: None", BAD_ACTION_PROBLEM),
    ("action-parenthesis", "Action: (none needed yet)", BAD_ACTION_PROBLEM),
    ("empty-tool-call-tag", "<tool_call>\n</tool_call>", MARKUP_PROBLEM),
    (
        "empty-final-answer",
        "Thought: hmm\nFinal Answer:   ",
        'a "Final Answer:" label was found but no answer follows it',
    ),
]


@pytest.mark.parametrize(
    ("reply", "calls", "thought"), [c[1:] for c in PROTOCOL_CASES], ids=[c[0] for c in PROTOCOL_CASES]
)
def test_json_protocol(reply: str, calls: Calls, thought: str):
    parsed = parse_output(reply)
    assert calls_of(parsed) == calls
    assert parsed.thought == thought
    assert parsed.problem == ""


@pytest.mark.parametrize(("reply", "calls"), [c[1:] for c in KEY_VARIANT_CASES], ids=[c[0] for c in KEY_VARIANT_CASES])
def test_call_object_shapes(reply: str, calls: Calls):
    parsed = parse_output(f"Next step.\n{reply}")
    assert calls_of(parsed) == calls
    assert parsed.thought == "Next step."


@pytest.mark.parametrize(("reply", "calls", "thought"), [c[1:] for c in MARKUP_CASES], ids=[c[0] for c in MARKUP_CASES])
def test_tool_call_markup(reply: str, calls: Calls, thought: str):
    parsed = parse_output(reply)
    assert calls_of(parsed) == calls
    assert parsed.thought == thought


@pytest.mark.parametrize(("reply", "calls", "thought"), [c[1:] for c in THINK_CASES], ids=[c[0] for c in THINK_CASES])
def test_reasoning_blocks(reply: str, calls: Calls, thought: str):
    parsed = parse_output(reply)
    assert calls_of(parsed) == calls
    assert parsed.thought == thought


@pytest.mark.parametrize(("reply", "calls", "thought"), [c[1:] for c in REACT_CASES], ids=[c[0] for c in REACT_CASES])
def test_react_text(reply: str, calls: Calls, thought: str):
    parsed = parse_output(reply)
    assert calls_of(parsed) == calls
    assert parsed.thought == thought


@pytest.mark.parametrize(("reply", "problem"), [c[1:] for c in NO_CALL_CASES], ids=[c[0] for c in NO_CALL_CASES])
def test_no_call(reply: str, problem: str):
    parsed = parse_output(reply)
    assert parsed.calls == ()
    assert parsed.problem == problem


def test_invalid_json_names_the_fault():
    parsed = parse_output('```json\n{"action": "query_logs", "args": {"service": "a" "limit": 5}}\n```')
    assert parsed.calls == ()
    assert parsed.problem.startswith("the JSON block is not valid JSON: Expecting ',' delimiter")


def test_prose_thought_is_kept_when_no_call():
    parsed = parse_output("Thought: the metrics look normal.\nI am not sure yet.")
    assert parsed.thought == "the metrics look normal.\nI am not sure yet."


def test_calls_are_tool_calls_without_ids():
    (call,) = parse_output('{"action": "list_pods", "args": {"ns": "a"}}').calls
    assert call == ToolCall(name="list_pods", args={"ns": "a"})
    assert call.id is None


def test_parsed_output_is_frozen():
    parsed = parse_output("hello")
    with pytest.raises(ValueError, match="frozen"):
        parsed.thought = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    "reply",
    [
        "{" * 100_000,
        "[{" * 50_000,
        "}" * 10_000 + "{" * 10_000,
        '{"a": ' * 50_000,
        "\x00\xff\ud7ff" * 1000,
        '"' + "\\" * 10_001,
        "```" * 5000,
        "<think>" * 5000,
        "<tool_call>" * 5000 + "{",
        "[" + "f(" * 5000 + ")" * 5000 + "]",
        "Action: x\nAction Input: {" * 2000,
        "f({\n" * 5000,
        '```json\n{"a": 1\n```\n' * 3000,
        "<start_function_call>call:f{<escape>" * 5000,
        '{\\"' * 30000,
        "｛“" * 50000,
    ],
    ids=[
        "open",
        "arrays",
        "close-open",
        "nested-keys",
        "binary",
        "backslashes",
        "fences",
        "thinks",
        "tags",
        "pythonic",
        "inputs",
        "code-lines",
        "unclosed-fences",
        "function-gemma",
        "escaped",
        "full-width",
    ],
)
def test_pathological_input_never_raises(reply: str):
    parsed = parse_output(reply)
    assert isinstance(parsed, ParsedOutput)


@pytest.mark.parametrize("block", [fenced, json.dumps], ids=["fenced", "bare"])
def test_megabyte_reply_with_call_at_the_end(block: Any):
    logs = "\n".join(json.dumps({"level": "info", "msg": f"request {i} ok"}) for i in range(23_000))
    reply = f"Logs:\n{logs}\n" + block({"action": "query_metrics", "args": {"service": "a"}})
    assert len(reply) > 1_000_000
    assert calls_of(parse_output(reply)) == [("query_metrics", {"service": "a"})]


def test_nested_call_deep_inside_data_is_not_a_call():
    parsed = parse_output('{"result": {"data": {"action": "restart_service", "args": {}}}}')
    assert parsed.calls == ()


# --- the tolerant JSON layer underneath ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("{'a': 'it\\'s', 'b': None, 'c': False}", {"a": "it's", "b": None, "c": False}),
        ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
        ('{a: 1, b_c: "x"}', {"a": 1, "b_c": "x"}),
        ('{"a": 1, // comment\n "b": 2}', {"a": 1, "b": 2}),
        ('{"q": "sum(rate(x{job="a"}[5m]))"}', {"q": 'sum(rate(x{job="a"}[5m]))'}),
        ('{"msg": "He said "hi", then left"}', {"msg": 'He said "hi", then left'}),
        ('{"a": "line\nbreak"}', {"a": "line\nbreak"}),
    ],
)
def test_load_lenient(text: str, value: Any):
    assert load_lenient(text) == value


@pytest.mark.parametrize("text", ['{"a": ', "{'a': (1, 2)}", "{'a': '\\N'}", "not json at all {", "__import__('os')"])
def test_load_lenient_rejects(text: str):
    with pytest.raises(LenientJSONError):
        load_lenient(text)


def test_scan_respects_strings_and_reports_unclosed():
    text = 'see {"a": "}{", "b": {"c": 1}} and {"d": "unterminated'
    scan = scan_spans(text)
    assert [text[start:end] for start, end in scan.outermost()] == ['{"a": "}{", "b": {"c": 1}}']
    assert scan.unclosed == (text.index('{"d"'),)


def test_match_closing():
    text = '{"a": [1, {"b": "]"}]} tail'
    assert match_closing(text, 0) == text.index(" tail")
    assert match_closing('{"a": 1', 0) is None
    assert match_closing("x{}", 0) is None
