"""Tests for the text parser on model families' native call formats: Functionary, Command R, FunctionGemma, LFM2,
and calls written as JS-style code. Each class names where its format was checked."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from kernel.parsing.call_blocks import TRUNCATED_PROBLEM
from kernel.parsing.reply import ParsedOutput, parse_output

PROMQL = 'sum(rate(http_requests_total{job="checkout",code=~"5.."}[5m])) by (pod)'
Calls = list[tuple[str, dict[str, Any]]]
Case = tuple[str, str, Calls, str]


def calls_of(parsed: ParsedOutput) -> Calls:
    return [(call.name, call.args) for call in parsed.calls]


def check(reply: str, calls: Calls, thought: str) -> None:
    parsed = parse_output(reply)
    assert calls_of(parsed) == calls
    assert parsed.thought == thought
    assert parsed.problem == ""


def cases(table: list[Case]) -> Any:
    return pytest.mark.parametrize(("reply", "calls", "thought"), [c[1:] for c in table], ids=[c[0] for c in table])


class TestFunctionary:
    """v3.2: `>>>name\\n{json}`, `>>>all\\n` for text, and at the very start no `>>>` (the generation prompt ends in
    it) — llama.cpp `common_chat_parse_functionary_v3_2`. v3.1: `<function=name>{json}</function>` — llama.cpp
    `functionary_v3_1_llama_3_1`. v2: `<|from|>` / `<|recipient|>` / `<|content|>` / `<|stop|>` — MeetKai's
    `PromptTemplateV2`."""

    CASES: ClassVar[list[Case]] = [
        (
            "v3.2-text-then-call",
            '>>>all\nThe 5xx spike lines up with a deploy; checking the history.>>>get_deploy_history\n{"service": "api"}',
            [("get_deploy_history", {"service": "api"})],
            "The 5xx spike lines up with a deploy; checking the history.",
        ),
        (
            "v3.2-after-generation-prompt",
            'all\nLet me look at the logs first.>>>query_logs\n{"service": "api", "since": "30m"}<|eot_id|>',
            [("query_logs", {"service": "api", "since": "30m"})],
            "Let me look at the logs first.",
        ),
        ("v3.2-first-call-bare", 'list_pods\n{"namespace": "prod"}', [("list_pods", {"namespace": "prod"})], ""),
        (
            "v3.2-parallel",
            '>>>query_logs\n{"service": "api"}\n>>>list_pods\n{"namespace": "prod"}',
            [("query_logs", {"service": "api"}), ("list_pods", {"namespace": "prod"})],
            "",
        ),
        (
            "v3.1-function-tag",
            'I will check the pods.\n<function=list_pods>{"namespace": "prod"}</function><|eom_id|>',
            [("list_pods", {"namespace": "prod"})],
            "I will check the pods.",
        ),
        (
            "v2-recipients",
            "<|from|>assistant\n<|recipient|>all\n<|content|>Checking the logs.\n<|from|>assistant\n"
            '<|recipient|>query_logs\n<|content|>{"service": "api"}<|stop|>',
            [("query_logs", {"service": "api"})],
            "Checking the logs.",
        ),
    ]

    @cases(CASES)
    def test_calls(self, reply: str, calls: Calls, thought: str) -> None:
        check(reply, calls, thought)

    def test_text_only_turn_is_no_call(self) -> None:
        parsed = parse_output(">>>all\nThe error rate is back to 0.1%; the rollback worked.")
        assert parsed.calls == ()
        assert parsed.thought == "The error rate is back to 0.1%; the rollback worked."

    def test_python_prompt_in_an_explanation_is_no_call(self) -> None:
        parsed = parse_output("The runbook check:\n```\n>>> import requests\n>>> requests.get(url)\n```")
        assert parsed.calls == ()

    def test_a_capitalised_first_line_is_not_a_bare_first_call(self) -> None:
        """Only a snake_case name starts the reply as a call without `>>>`: `Evidence` is prose."""
        parsed = parse_output('Evidence\n{"level": "error", "msg": "pool exhausted"}')
        assert parsed.calls == ()


class TestCommandR:
    """Command R7B: `<|START_THINKING|>…<|END_THINKING|><|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]
    <|END_ACTION|>` — llama.cpp `common/chat-parsers/command-r7b.cpp`. Command R+: `Action: ```json [{"tool_name",
    "parameters"}] ```` — Cohere's tool-use prompt ("Write 'Action:' followed by a json-formatted list of actions")."""

    CASES: ClassVar[list[Case]] = [
        (
            "r7b-thinking-then-action",
            "<|START_THINKING|>The error rate jumped at 10:02; the deploy history will tell.<|END_THINKING|>"
            '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_deploy_history", "parameters": '
            '{"service": "api"}}\n]<|END_ACTION|>',
            [("get_deploy_history", {"service": "api"})],
            "The error rate jumped at 10:02; the deploy history will tell.",
        ),
        (
            "r7b-two-actions",
            '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "list_pods", "parameters": {}}, '
            '{"tool_call_id": "1", "tool_name": "query_logs", "parameters": {"service": "api"}}]<|END_ACTION|>',
            [("list_pods", {}), ("query_logs", {"service": "api"})],
            "",
        ),
        (
            "r7b-list-with-its-tokens-stripped",
            'I will list the pods. [{"tool_call_id": "1", "tool_name": "list_pods", "parameters": {"namespace": "a"}}]',
            [("list_pods", {"namespace": "a"})],
            "I will list the pods.",
        ),
        (
            "r-plus-action-fence",
            'Plan: I will first check the logs.\nAction: ```json\n[\n    {\n        "tool_name": "query_logs",\n'
            '        "parameters": {\n            "service": "api"\n        }\n    }\n]\n```',
            [("query_logs", {"service": "api"})],
            "Plan: I will first check the logs.",
        ),
        (
            "r-plus-two-tools",
            'Action:\n```json\n[\n    {"tool_name": "list_pods", "parameters": {}},\n'
            '    {"tool_name": "get_deploy_history", "parameters": {"service": "api"}}\n]\n```',
            [("list_pods", {}), ("get_deploy_history", {"service": "api"})],
            "",
        ),
    ]

    @cases(CASES)
    def test_calls(self, reply: str, calls: Calls, thought: str) -> None:
        check(reply, calls, thought)

    def test_a_response_is_text(self) -> None:
        parsed = parse_output(
            "<|START_THINKING|>Enough evidence.<|END_THINKING|><|START_RESPONSE|>The DB pool is exhausted.<|END_RESPONSE|>"
        )
        assert parsed.calls == ()
        assert parsed.thought == "The DB pool is exhausted."


class TestFunctionGemma:
    """`<start_function_call>call:name{key:<escape>text<escape>,n:1}<end_function_call>`; strings sit between
    `<escape>` tokens, other values are bare — Google's FunctionGemma formatting guide, llama.cpp `function-gemma`."""

    CASES: ClassVar[list[Case]] = [
        (
            "escaped-string-and-number",
            "<start_function_call>call:query_logs{service:<escape>checkout<escape>,limit:50}<end_function_call>",
            [("query_logs", {"service": "checkout", "limit": 50})],
            "",
        ),
        (
            "braces-and-quotes-inside-a-string",
            f"<start_function_call>call:query_metrics{{query:<escape>{PROMQL}<escape>,window:<escape>30m<escape>}}"
            "<end_function_call>",
            [("query_metrics", {"query": PROMQL, "window": "30m"})],
            "",
        ),
        (
            "unbalanced-brace-inside-a-string",
            "<start_function_call>call:post_message{text:<escape>done}, errors back to 0.1%<escape>}<end_function_call>",
            [("post_message", {"text": "done}, errors back to 0.1%"})],
            "",
        ),
        (
            "parallel",
            "<start_function_call>call:list_pods{namespace:<escape>prod<escape>}<end_function_call>"
            "<start_function_call>call:query_logs{service:<escape>api<escape>}<end_function_call>",
            [("list_pods", {"namespace": "prod"}), ("query_logs", {"service": "api"})],
            "",
        ),
        (
            "list-and-boolean",
            "<start_function_call>call:restart_service{services:[<escape>api<escape>,<escape>web<escape>],"
            "force:false}<end_function_call><start_function_response>",
            [("restart_service", {"services": ["api", "web"], "force": False})],
            "",
        ),
        ("no-arguments", "<start_function_call>call:list_pods{}<end_function_call>", [("list_pods", {})], ""),
    ]

    @cases(CASES)
    def test_calls(self, reply: str, calls: Calls, thought: str) -> None:
        check(reply, calls, thought)

    def test_the_format_quoted_in_prose_is_no_call(self) -> None:
        parsed = parse_output("The docs show call:get_weather{location:<escape>Paris<escape>} as the format.")
        assert parsed.calls == ()

    def test_a_call_the_reply_ends_inside_is_cut_off(self) -> None:
        parsed = parse_output("<start_function_call>call:query_logs{service:<escape>check")
        assert parsed.calls == ()
        assert parsed.problem == TRUNCATED_PROBLEM


class TestJsStyleCalls:
    """`name({key: "value"})` written as code, the way small models call tools when told to "call" them: on a line of
    its own, or filling a code fence. Mentioned mid-sentence it is prose."""

    CASES: ClassVar[list[Case]] = [
        (
            "own-line-after-prose",
            'Checking the error logs.\nquery_logs({service: "checkout", since: "15m"})',
            [("query_logs", {"service": "checkout", "since": "15m"})],
            "Checking the error logs.",
        ),
        (
            "javascript-fence",
            'Per-pod rate next.\n```javascript\nquery_metrics({query: "rate(http_requests_total[5m])"})\n```',
            [("query_metrics", {"query": "rate(http_requests_total[5m])"})],
            "Per-pod rate next.",
        ),
        ("json-argument", 'get_deploy_history({"service": "api"})', [("get_deploy_history", {"service": "api"})], ""),
        (
            "await-and-semicolon",
            "```js\nawait list_pods({namespace: 'prod'});\n```",
            [("list_pods", {"namespace": "prod"})],
            "",
        ),
        (
            "multi-line-object",
            'The pod is in an OOM loop.\nrestart_service({\n  service: "checkout",\n  reason: "OOM loop",\n})',
            [("restart_service", {"service": "checkout", "reason": "OOM loop"})],
            "The pod is in an OOM loop.",
        ),
        (
            "fence-of-two-calls",
            '```ts\nlist_pods({namespace: "prod"});\nquery_logs({service: "api"});\n```',
            [("list_pods", {"namespace": "prod"}), ("query_logs", {"service": "api"})],
            "",
        ),
        (
            "after-think",
            '<think>Logs.</think>\nfunctions.query_logs({"service": "api"})',
            [("query_logs", {"service": "api"})],
            "Logs.",
        ),
        (
            "argument-with-an-action-key",
            'restart_service({"action": "rollback", "service": "api"})',
            [("restart_service", {"action": "rollback", "service": "api"})],
            "",
        ),
        (
            "react-action-line",
            'Thought: logs.\nAction: query_logs({service: "api"})',
            [("query_logs", {"service": "api"})],
            "logs.",
        ),
    ]

    @cases(CASES)
    def test_calls(self, reply: str, calls: Calls, thought: str) -> None:
        check(reply, calls, thought)

    @pytest.mark.parametrize(
        "reply",
        [
            'Next I would run query_logs({service: "checkout"}) but first the window.',
            'I considered `restart_service({service: "checkout"})`; the evidence is against it.',
            "console.log({status: 503})\nThat line printed the 503s.",
            "```js\nconst res = await fetch(url);\nrender({status: res.status});\n```\nThe page renders the status.",
            "if ({ready: true})\n  go()",
        ],
        ids=["mid-sentence", "inline-code", "dotted-builtin", "fence-with-other-code", "keyword"],
    )
    def test_code_that_is_not_a_call(self, reply: str) -> None:
        assert parse_output(reply).calls == ()

    def test_code_shown_in_a_final_answer_is_the_answer(self) -> None:
        """After `Final Answer:` a line of code is what the answer recommends, not a call to run now."""
        parsed = parse_output('Final Answer:\nrollback_deployment({service: "checkout"})')
        assert calls_of(parsed) == [("finish", {"answer": 'rollback_deployment({service: "checkout"})'})]


class TestLfm2:
    """`<|tool_call_start|>[name(key="value"), ...]<|tool_call_end|>`, Pythonic, or a JSON list — SGLang's LFM2
    detector and the LFM2-1.2B-Tool model card; servers that strip special tokens leave the bare list on its line."""

    CASES: ClassVar[list[Case]] = [
        (
            "pythonic",
            '<|tool_call_start|>[query_logs(service="checkout", limit=20)]<|tool_call_end|>',
            [("query_logs", {"service": "checkout", "limit": 20})],
            "",
        ),
        (
            "parallel",
            '<|tool_call_start|>[list_pods(namespace="prod"), get_deploy_history(service="api")]<|tool_call_end|>',
            [("list_pods", {"namespace": "prod"}), ("get_deploy_history", {"service": "api"})],
            "",
        ),
        (
            "after-think",
            "<think>The alert names checkout; its logs come first.</think>"
            '<|tool_call_start|>[query_logs(service="checkout")]<|tool_call_end|>',
            [("query_logs", {"service": "checkout"})],
            "The alert names checkout; its logs come first.",
        ),
        (
            "json-list",
            '<|tool_call_start|>[{"name": "query_logs", "arguments": {"service": "api"}}]<|tool_call_end|>',
            [("query_logs", {"service": "api"})],
            "",
        ),
        (
            "tokens-stripped",
            'I will check the deploy history first.\n[get_deploy_history(service="checkout")]',
            [("get_deploy_history", {"service": "checkout"})],
            "I will check the deploy history first.",
        ),
    ]

    @cases(CASES)
    def test_calls(self, reply: str, calls: Calls, thought: str) -> None:
        check(reply, calls, thought)

    def test_a_list_in_a_sentence_is_prose(self) -> None:
        assert parse_output("The timeline was [deploy(at=10), rollback(at=11)] in the doc.").calls == ()

    def test_positional_arguments_are_not_a_call_list(self) -> None:
        assert parse_output("Indexing:\n[len(pods)]").calls == ()
