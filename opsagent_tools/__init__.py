"""OpsAgent's tools: what the agent can read (metrics, logs, code) and do (actions through a signed webhook).

One subpackage per backend family, each with its tools and backends; `toolset` builds the configured registry.
Every tool runs behind the kernel's one dispatch (permissions, timeouts, redaction, audit); nothing here knows Slack.
"""
