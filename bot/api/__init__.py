"""The HTTP API and the MCP server: other agents and tools ask OpsAgent to investigate, follow the run, steer it and
read its verdict; people still approve every side effect in Slack.

- `settings.py`  `[api]`: enabled, where the tokens are, the channel runs post in, the approval channel.
- `tokens.py`    the clients' bearer tokens, checked in constant time.
- `shapes.py`    the wire shapes of requests and answers (the OpenAPI document's schemas).
- `views.py`     a stored run as the API shows it: status, steps, usage, the verdict.
- `events.py`    a run's events, derived from its checkpoint, with ids stable across restarts and replicas.
- `problems.py`  why a request did nothing, with its status, in words for the caller.
- `wakeups.py`   waking event streams and waits when a run's checkpoint moves (the progress topic).
- `runs.py`      what a client may do, whichever way it calls: through the gate, its own runs only.
- `rest.py`      the REST door and the Server-Sent Events stream.
- `openapi.py`   the OpenAPI document (kept in docs/api/openapi.json).
- `mcp_tools.py` the MCP server's tools (the official SDK).
- `mcp_door.py`  `/mcp` on aiohttp: token, body, and an ASGI bridge to the SDK's streamable HTTP transport.
- `serve.py`     the API on `serve`'s listener, started and closed with the Slack services.
- `check.py`     what `opsagent check` says of the API.
"""
