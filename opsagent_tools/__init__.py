"""OpsAgent's tools: what the agent can read (metrics, logs, code) and do (actions through a signed webhook).

One subpackage per tool family, each a `ToolFamily` (`family.py`) over its own settings, tools and check;
`toolset` iterates the configured families to build the registry and to run `opsagent check`.
Every tool runs behind the kernel's one dispatch (permissions, timeouts, redaction, audit); nothing here knows Slack.
"""
