"""Stretch replies for the scored corpus: damaged JSON and the model families beyond the core, with their calls.

Plain `(family, reply, calls)` rows; `parsing_corpus` tiers and scores them.
"""

from __future__ import annotations

from typing import Any

Row = tuple[str, str, tuple[tuple[str, dict[str, Any]], ...]]
PROMQL = 'sum(rate(http_requests_total{job="checkout",code=~"5.."}[5m])) by (pod)'
LOGS_A = ("query_logs", {"service": "checkout"})
PODS = ("list_pods", {"namespace": "prod"})
DEPLOYS = ("get_deploy_history", {"service": "checkout"})


def reply(family: str, text: str, *calls: tuple[str, dict[str, Any]]) -> Row:
    return (family, text, calls)


STRETCH: tuple[Row, ...] = (
    # --- stretch: JSON5-like damage ---------------------------------------------------------------------------------
    reply(
        "json5",
        'Next, the logs.\n```json\n{action: "query_logs", args: {service: "checkout", limit: 50}}\n```',
        ("query_logs", {"service": "checkout", "limit": 50}),
    ),
    reply(
        "json5",
        "{'action': 'restart_service', 'args': {'service': 'checkout',},}",
        ("restart_service", {"service": "checkout"}),
    ),
    reply(
        "json5",
        "I will check the logs.\n{“action”: “query_logs”, “args”: {“service”: “checkout”}}",
        LOGS_A,
    ),
    reply(
        "json5",
        "{“action”: “post_message”, “args”: {“text”: “the pool’s exhausted again”}}",
        ("post_message", {"text": "the pool’s exhausted again"}),
    ),
    reply("json5", "Pods first: {‘action’: ‘list_pods’, ‘args’: {‘namespace’: ‘prod’}}", PODS),
    reply(
        "json5",
        '我需要查看日志。\n{"action"："query_logs"，"args"：{"service"："checkout"}}',
        LOGS_A,
    ),
    reply(
        "json5",
        "先看看部署记录。\n｛“action”：“get_deploy_history”，“args”：｛“service”：“checkout”｝｝",
        DEPLOYS,
    ),
    reply(
        "json5",
        "{“action”：“post_message”，“args”：{“text”：“回滚完成，错误率恢复正常”}}",
        ("post_message", {"text": "回滚完成，错误率恢复正常"}),
    ),
    reply(
        "json5",
        'Checking the logs.\n```json\n{"action": "query_logs", "args": {"service": "checkout"}\n```',
        LOGS_A,
    ),
    reply(
        "json5",
        '```json\n{"action": "query_logs", "args": {"service": "checkout"\n```\nThat should show the errors.',
        LOGS_A,
    ),
    reply(
        "json5",
        '<tool_call>\n{"name": "list_pods", "arguments": {"namespace": "prod"}\n</tool_call>',
        PODS,
    ),
    reply(
        "json5",
        '```json\n{\n  // pods first, then logs\n  "action": "list_pods",\n  "args": {"namespace": "prod",},\n}\n```',
        PODS,
    ),
    reply(
        "json5",
        '{"action": "query_metrics", /* p99 over the incident */ "args": {"query": "histogram_quantile(0.99, x)"}}',
        ("query_metrics", {"query": "histogram_quantile(0.99, x)"}),
    ),
    reply(
        "json5",
        'Calling it: {\\"action\\": \\"query_logs\\", \\"args\\": {\\"service\\": \\"checkout\\"}}',
        LOGS_A,
    ),
    reply(
        "json5",
        '<tool_call>{\\"name\\": \\"list_pods\\", \\"arguments\\": {\\"namespace\\": \\"prod\\"}}</tool_call>',
        PODS,
    ),
    reply(
        "json5",
        'Next: "{\\"action\\": \\"get_deploy_history\\", \\"args\\": {\\"service\\": \\"checkout\\"}}"',
        DEPLOYS,
    ),
    reply(
        "json5",
        '```json\n"{\\"name\\": \\"query_logs\\", \\"arguments\\": {\\"service\\": \\"checkout\\"}}"\n```',
        LOGS_A,
    ),
    reply(
        "json5",
        "Looking at logs. {&quot;action&quot;: &quot;query_logs&quot;, &quot;args&quot;: "
        "{&quot;service&quot;: &quot;checkout&quot;}}",
        LOGS_A,
    ),
    reply(
        "json5",
        "&lt;tool_call&gt;\n{&quot;name&quot;: &quot;list_pods&quot;, &quot;arguments&quot;: "
        "{&quot;namespace&quot;: &quot;prod&quot;}}\n&lt;/tool_call&gt;",
        PODS,
    ),
    reply(
        "json5", "{&#34;action&#34;: &#34;list_pods&#34;, &#34;args&#34;: {&#34;namespace&#34;: &#34;prod&#34;}}", PODS
    ),
    reply(
        "json5",
        "<think>Errors spiked; logs next.</think>\n{action: 'query_logs', args: {service: 'checkout', follow: False, since: None,},}",
        ("query_logs", {"service": "checkout", "follow": False, "since": None}),
    ),
    # --- stretch: Functionary -----------------------------------------------------------------------------------------
    reply(
        "functionary",
        '>>>all\nThe spike lines up with a deploy; checking the history.>>>get_deploy_history\n{"service": "checkout"}',
        DEPLOYS,
    ),
    reply(
        "functionary",
        'all\nLet me look at the logs first.>>>query_logs\n{"service": "checkout"}',
        LOGS_A,
    ),
    reply("functionary", 'list_pods\n{"namespace": "prod"}', PODS),
    reply(
        "functionary",
        '>>>query_logs\n{"service": "checkout"}>>>list_pods\n{"namespace": "prod"}<|eot_id|>',
        LOGS_A,
        PODS,
    ),
    reply("functionary", '<function=list_pods>{"namespace": "prod"}</function>', PODS),
    reply(
        "functionary",
        'I will check the pods.\n<function=list_pods>{"namespace": "prod"}</function><|eom_id|>',
        PODS,
    ),
    reply(
        "functionary",
        "<|from|>assistant\n<|recipient|>all\n<|content|>Checking the logs.\n<|from|>assistant\n"
        '<|recipient|>query_logs\n<|content|>{"service": "checkout"}<|stop|>',
        LOGS_A,
    ),
    # --- stretch: Command R7B / Command R+ ----------------------------------------------------------------------------
    reply(
        "command-r",
        "<|START_THINKING|>The error rate jumped at 10:02; the deploy history will tell.<|END_THINKING|>"
        '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_deploy_history", "parameters": '
        '{"service": "checkout"}}\n]<|END_ACTION|>',
        DEPLOYS,
    ),
    reply(
        "command-r",
        '<|START_THINKING|>Pods and logs.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": '
        '"list_pods", "parameters": {"namespace": "prod"}}, {"tool_call_id": "1", "tool_name": "query_logs", '
        '"parameters": {"service": "checkout"}}]<|END_ACTION|>',
        PODS,
        LOGS_A,
    ),
    reply(
        "command-r",
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "list_pods", "parameters": {"namespace": "prod"}}]<|END_ACTION|>',
        PODS,
    ),
    reply(
        "command-r",
        'Plan: I will first check the logs.\nAction: ```json\n[\n    {\n        "tool_name": "query_logs",\n'
        '        "parameters": {\n            "service": "checkout"\n        }\n    }\n]\n```',
        LOGS_A,
    ),
    reply(
        "command-r",
        'Action:\n```json\n[\n    {"tool_name": "list_pods", "parameters": {"namespace": "prod"}},\n'
        '    {"tool_name": "get_deploy_history", "parameters": {"service": "checkout"}}\n]\n```',
        PODS,
        DEPLOYS,
    ),
    reply(
        "command-r",
        'I will list the pods. [{"tool_call_id": "1", "tool_name": "list_pods", "parameters": {"namespace": "prod"}}]',
        PODS,
    ),
    # --- stretch: FunctionGemma ---------------------------------------------------------------------------------------
    reply(
        "functiongemma",
        "<start_function_call>call:query_logs{service:<escape>checkout<escape>,limit:50}<end_function_call>",
        ("query_logs", {"service": "checkout", "limit": 50}),
    ),
    reply(
        "functiongemma",
        f"<start_function_call>call:query_metrics{{query:<escape>{PROMQL}<escape>,window:<escape>30m<escape>}}"
        "<end_function_call>",
        ("query_metrics", {"query": PROMQL, "window": "30m"}),
    ),
    reply(
        "functiongemma",
        "<start_function_call>call:list_pods{namespace:<escape>prod<escape>}<end_function_call>"
        "<start_function_call>call:query_logs{service:<escape>checkout<escape>}<end_function_call>",
        PODS,
        LOGS_A,
    ),
    reply(
        "functiongemma",
        "<start_function_call>call:restart_service{services:[<escape>api<escape>,<escape>web<escape>],force:false}"
        "<end_function_call>",
        ("restart_service", {"services": ["api", "web"], "force": False}),
    ),
    reply("functiongemma", "<start_function_call>call:list_pods{}<end_function_call>", ("list_pods", {})),
    reply(
        "functiongemma",
        "<start_function_call>call:post_message{text:<escape>Rollback done, errors back to 0.1%<escape>}"
        "<end_function_call><start_function_response>",
        ("post_message", {"text": "Rollback done, errors back to 0.1%"}),
    ),
    # --- stretch: JS-style calls --------------------------------------------------------------------------------------
    reply(
        "js-call",
        'Checking the error logs.\nquery_logs({service: "checkout", since: "15m"})',
        ("query_logs", {"service": "checkout", "since": "15m"}),
    ),
    reply(
        "js-call",
        'Per-pod rate next.\n```javascript\nquery_metrics({query: "rate(http_requests_total[5m])"})\n```',
        ("query_metrics", {"query": "rate(http_requests_total[5m])"}),
    ),
    reply("js-call", 'get_deploy_history({"service": "checkout"})', DEPLOYS),
    reply("js-call", "```js\nawait list_pods({namespace: 'prod'});\n```", PODS),
    reply(
        "js-call",
        'The pod is in an OOM loop.\nrestart_service({\n  service: "checkout",\n  reason: "OOM loop",\n})',
        ("restart_service", {"service": "checkout", "reason": "OOM loop"}),
    ),
    reply(
        "js-call",
        '```ts\nlist_pods({namespace: "prod"});\nquery_logs({service: "checkout"});\n```',
        PODS,
        LOGS_A,
    ),
    reply("js-call", '<think>Logs.</think>\nfunctions.query_logs({"service": "checkout"})', LOGS_A),
    # --- stretch: LFM2 --------------------------------------------------------------------------------------------------
    reply(
        "lfm2",
        '<|tool_call_start|>[query_logs(service="checkout", limit=20)]<|tool_call_end|>',
        ("query_logs", {"service": "checkout", "limit": 20}),
    ),
    reply(
        "lfm2",
        '<|tool_call_start|>[list_pods(namespace="prod")]<|tool_call_end|>Checking the pods now.',
        PODS,
    ),
    reply(
        "lfm2",
        '<|tool_call_start|>[list_pods(namespace="prod"), get_deploy_history(service="checkout")]<|tool_call_end|>',
        PODS,
        DEPLOYS,
    ),
    reply(
        "lfm2",
        "<think>The alert names checkout; its logs come first.</think>"
        '<|tool_call_start|>[query_logs(service="checkout")]<|tool_call_end|>',
        LOGS_A,
    ),
    reply(
        "lfm2",
        '<|tool_call_start|>[{"name": "query_logs", "arguments": {"service": "checkout"}}]<|tool_call_end|>',
        LOGS_A,
    ),
    reply("lfm2", 'I will check the deploy history first.\n[get_deploy_history(service="checkout")]', DEPLOYS),
    # --- a second batch, written after the parser work and added untuned: 18/18 read (2/18 before it) ------------
    reply(
        "functionary",
        '>>>all\nChecking.\n>>>query_metrics\n{"query": "up", "window": "5m"}\n',
        ("query_metrics", {"query": "up", "window": "5m"}),
    ),
    reply(
        "command-r",
        "<|START_THINKING|>\nLooking at pods.\n<|END_THINKING|>\n<|START_ACTION|>\n[\n  "
        '{"tool_call_id": "0", "tool_name": "list_pods", "parameters": {"namespace": "prod"}}\n]\n<|END_ACTION|>',
        PODS,
    ),
    reply(
        "command-r",
        'Action: ```json\n[{"tool_name": "query_logs", "parameters": {"service": "checkout", "limit": 20}}]\n```',
        ("query_logs", {"service": "checkout", "limit": 20}),
    ),
    reply(
        "functiongemma",
        "<start_function_call>call:query_logs{service:<escape>checkout<escape>, since:<escape>15m<escape>}"
        "<end_function_call>",
        ("query_logs", {"service": "checkout", "since": "15m"}),
    ),
    reply(
        "functiongemma",
        "<start_function_call>call:post_message{channel:<escape>#inc<escape>,meta:{urgent:true}}<end_function_call>",
        ("post_message", {"channel": "#inc", "meta": {"urgent": True}}),
    ),
    reply(
        "js-call",
        "query_logs({service: 'checkout', levels: ['error', 'warn']})",
        ("query_logs", {"service": "checkout", "levels": ["error", "warn"]}),
    ),
    reply("js-call", '```\nlist_pods({namespace: "prod"})\n```', PODS),
    reply("js-call", "Listing.\nlist_pods({});", ("list_pods", {})),
    reply("js-call", '```javascript\nawait functions.query_logs({service: "checkout"});\n```', LOGS_A),
    reply("lfm2", '<|tool_call_start|>\n[query_logs(service="checkout")]\n<|tool_call_end|>', LOGS_A),
    reply(
        "lfm2",
        '<|tool_call_start|>[query_logs(service="checkout", follow=True, since=None)]<|tool_call_end|>',
        ("query_logs", {"service": "checkout", "follow": True, "since": None}),
    ),
    reply(
        "json5",
        "<tool_call>\n{name: 'query_logs', arguments: {service: 'checkout'}} // logs first\n</tool_call>",
        LOGS_A,
    ),
    reply("json5", "```json\n{“action”: “list_pods”, “args”: {“namespace”: “prod”}}\n```", PODS),
    reply(
        "json5",
        "```json\n{&quot;action&quot;: &quot;list_pods&quot;, &quot;args&quot;: {&quot;namespace&quot;: &quot;prod&quot;}}\n```",
        PODS,
    ),
    reply(
        "json5",
        'Done: "{\\"action\\": \\"finish\\", \\"args\\": {\\"answer\\": \\"Line one\\\\nLine two\\"}}"',
        ("finish", {"answer": "Line one\nLine two"}),
    ),
    reply("json5", '```json\n{"action": "list_pods", "args": {"namespace": "prod"},\n```', PODS),
    reply(
        "json5", '看一下 pod。<tool_call>{"name"："list_pods"，"arguments"：{"namespace"："prod"}}</tool_call>', PODS
    ),
    reply("json5", "&lt;function=list_pods&gt;{&quot;namespace&quot;: &quot;prod&quot;}&lt;/function&gt;", PODS),
)
