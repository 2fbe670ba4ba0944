"""Tests for damaged JSON in replies (JSON5-isms, typographic and full-width punctuation, escaping, lost braces),
and for prose that looks like a call but is not one: a call invented from prose is the worst outcome."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from kernel.parsing.call_blocks import TRUNCATED_PROBLEM
from kernel.parsing.lenient_json import LenientJSONError, load_lenient
from kernel.parsing.reply import ParsedOutput, parse_output

Calls = list[tuple[str, dict[str, Any]]]
LOGS = [("query_logs", {"service": "checkout"})]
PODS = [("list_pods", {"namespace": "prod"})]


def calls_of(parsed: ParsedOutput) -> Calls:
    return [(call.name, call.args) for call in parsed.calls]


class TestDamagedJson:
    CASES: ClassVar[list[tuple[str, str, Calls, str]]] = [
        (
            "unquoted-keys-in-a-fence",
            'Next, the logs.\n```json\n{action: "query_logs", args: {service: "checkout", limit: 50}}\n```',
            [("query_logs", {"service": "checkout", "limit": 50})],
            "Next, the logs.",
        ),
        (
            "curly-quotes-keep-an-apostrophe",
            "Telling the channel.\n{“action”: “post_message”, “args”: {“text”: “the pool’s exhausted again”}}",
            [("post_message", {"text": "the pool’s exhausted again"})],
            "Telling the channel.",
        ),
        (
            "single-curly-quotes",
            "Pods first: {‘action’: ‘list_pods’, ‘args’: {‘namespace’: ‘prod’}}",
            PODS,
            "Pods first:",
        ),
        (
            "full-width-colons-and-commas",
            '我需要查看日志。\n{"action"："query_logs"，"args"：{"service"："checkout"}}',
            LOGS,
            "我需要查看日志。",
        ),
        (
            "full-width-braces-and-quotes",
            "先看看部署记录。\n｛“action”：“get_deploy_history”，“args”：｛“service”：“checkout”｝｝",
            [("get_deploy_history", {"service": "checkout"})],
            "先看看部署记录。",
        ),
        (
            "full-width-comma-inside-a-value-is-kept",
            "{“action”：“post_message”，“args”：{“text”：“回滚完成，错误率恢复正常”}}",
            [("post_message", {"text": "回滚完成，错误率恢复正常"})],
            "",
        ),
        (
            "last-brace-missing-in-a-closed-fence",
            'Checking the logs.\n```json\n{"action": "query_logs", "args": {"service": "checkout"}\n```',
            LOGS,
            "Checking the logs.",
        ),
        (
            "two-braces-missing-prose-after",
            '```json\n{"action": "query_logs", "args": {"service": "checkout"\n```\nThat should show the errors.',
            LOGS,
            "",
        ),
        (
            "brace-missing-in-a-closed-tag",
            '<tool_call>\n{"name": "list_pods", "arguments": {"namespace": "prod"}\n</tool_call>',
            PODS,
            "",
        ),
        (
            "brace-missing-before-end-token",
            '<|python_tag|>{"name": "list_pods", "parameters": {"namespace": "prod"}<|eom_id|>',
            PODS,
            "",
        ),
        ("brace-missing-in-function-tag", '<function=list_pods>{"namespace": "prod"</function>', PODS, ""),
        (
            "comments-and-trailing-commas",
            '```json\n{\n  // pods first, then logs\n  "action": "list_pods",\n  "args": {"namespace": "prod",},\n}\n```',
            PODS,
            "",
        ),
        (
            "block-comment",
            '{"action": "query_metrics", /* p99 over the incident */ "args": {"query": "histogram_quantile(0.99, x)"}}',
            [("query_metrics", {"query": "histogram_quantile(0.99, x)"})],
            "",
        ),
        (
            "escaped-json",
            'Calling it: {\\"action\\": \\"query_logs\\", \\"args\\": {\\"service\\": \\"checkout\\"}}',
            LOGS,
            "Calling it:",
        ),
        (
            "escaped-json-in-a-tag",
            '<tool_call>{\\"name\\": \\"list_pods\\", \\"arguments\\": {\\"namespace\\": \\"prod\\"}}</tool_call>',
            PODS,
            "",
        ),
        (
            "json-inside-a-string-literal",
            'Next: "{\\"action\\": \\"query_logs\\", \\"args\\": {\\"service\\": \\"checkout\\"}}"',
            LOGS,
            "Next:",
        ),
        (
            "doubly-escaped",
            '{\\\\\\"action\\\\\\": \\\\\\"query_logs\\\\\\", \\\\\\"args\\\\\\": {\\\\\\"service\\\\\\": \\\\\\"checkout\\\\\\"}}',
            LOGS,
            "",
        ),
        (
            "html-escaped-json",
            "Looking at logs. {&quot;action&quot;: &quot;query_logs&quot;, &quot;args&quot;: "
            "{&quot;service&quot;: &quot;checkout&quot;}}",
            LOGS,
            "Looking at logs.",
        ),
        (
            "html-escaped-tag",
            "Pods.\n&lt;tool_call&gt;\n{&quot;name&quot;: &quot;list_pods&quot;, &quot;arguments&quot;: "
            "{&quot;namespace&quot;: &quot;prod&quot;}}\n&lt;/tool_call&gt;",
            PODS,
            "Pods.",
        ),
        (
            "python-isms-after-think",
            "<think>Errors spiked; logs next.</think>\n"
            "{action: 'query_logs', args: {service: 'checkout', follow: False, since: None,},}",
            [("query_logs", {"service": "checkout", "follow": False, "since": None})],
            "Errors spiked; logs next.",
        ),
    ]

    @pytest.mark.parametrize(("reply", "calls", "thought"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
    def test_repaired(self, reply: str, calls: Calls, thought: str) -> None:
        parsed = parse_output(reply)
        assert calls_of(parsed) == calls
        assert parsed.thought == thought
        assert parsed.problem == ""

    @pytest.mark.parametrize(
        "reply",
        [
            'Next:\n```json\n{"action": "query_logs", "args": {"service": "checkout"}',
            '<tool_call>\n{"name": "list_pods", "arguments": {"namespace": "prod"}',
            '```json\n{"action": "finish", "args": {"answer": "Roll back:\n```bash\nkubectl rollout undo',
            '<function=list_pods>{"namespace": "pr</function>',
        ],
        ids=["fence-never-closed", "tag-never-closed", "fence-closes-inside-a-string", "tag-closes-inside-a-string"],
    )
    def test_a_block_the_reply_ends_inside_is_cut_off_not_guessed(self, reply: str) -> None:
        parsed = parse_output(reply)
        assert parsed.calls == ()
        assert parsed.problem == TRUNCATED_PROBLEM


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("{“a”: “it’s”}", {"a": "it’s"}),
        ("{‘a’: ‘b’}", {"a": "b"}),
        ("｛“a”：1，“b”：［1，2］｝", {"a": 1, "b": [1, 2]}),
        ('{"a": 1, /* two\nlines */ "b": 2}', {"a": 1, "b": 2}),
        ('{q:<escape>{a}, "b"<escape>,n:2}', {"q": '{a}, "b"', "n": 2}),
        ('{\\"a\\": \\"x\\\\ny\\"}', {"a": "x\ny"}),
    ],
    ids=["curly", "single-curly", "full-width", "block-comment", "escape-tokens", "escaped"],
)
def test_load_lenient_repairs(text: str, value: Any) -> None:
    assert load_lenient(text) == value


def test_load_lenient_closes_brackets_only_when_asked_and_never_a_string() -> None:
    with pytest.raises(LenientJSONError):
        load_lenient('{"a": {"b": 1}')
    assert load_lenient('{"a": {"b": 1}', close_open=True) == {"a": {"b": 1}}
    assert load_lenient('{"a": [1, 2,', close_open=True) == {"a": [1, 2]}
    with pytest.raises(LenientJSONError):
        load_lenient('{"a": {"b": "unfinished', close_open=True)


CALL_LIKE_PROSE = [
    ("call-with-a-placeholder", "I will call query_metrics(service) next, once the logs are in."),
    ("args-example", 'The arguments would look like {"service": "checkout", "window": "5m"} for that query.'),
    (
        "log-line-as-evidence",
        'Evidence, from the log: {"level": "error", "action": "restart", "pod": "checkout-7d9f", "ts": "10:02:11"}.',
    ),
    ("shape-explained", 'A call has the shape {"action": "<tool name>", "args": {...}}; I have not chosen one yet.'),
    ("curly-prose", "“The pool is exhausted,” the on-call wrote, ‘again’ — that matches step 3."),
    ("full-width-prose", "结论：数据库连接池耗尽，建议扩容。“重启”不能解决问题。｛job：checkout｝是选择器。"),
    (
        "html-escaped-data",
        "The page showed {&quot;status&quot;: &quot;degraded&quot;, &quot;since&quot;: &quot;10:02&quot;}.",
    ),
    ("escaped-data", 'The webhook body was {\\"status\\": \\"ok\\", \\"attempt\\": 3}, so delivery worked.'),
    ("markdown-links", "See [the runbook](https://wiki/runbooks/checkout) and [restart(now)](https://wiki/restart)."),
    ("python-in-a-fence", "```python\nclient.query(service='checkout')\n```\nThat is how the exporter queries."),
    ("action-items", "Action items: restart the pods, then watch the logs for ten minutes."),
    ("command-r-answer", "Grounded answer: the checkout DB pool is exhausted; raise max_connections."),
    ("think-only-js", '<think>Maybe list_pods({namespace: "prod"})?</think>\nThe evidence is enough: the DB is down.'),
    ("content-marker-only", "all\nThe pods are healthy and the error rate is back to normal."),
]


@pytest.mark.parametrize("reply", [c[1] for c in CALL_LIKE_PROSE], ids=[c[0] for c in CALL_LIKE_PROSE])
def test_call_like_prose_is_no_call(reply: str) -> None:
    parsed = parse_output(reply)
    assert parsed.calls == ()
    assert parsed.thought
