"""What the tests and the benchmarks run OpsAgent against, where no real one can run here: local servers that speak
the real protocols (Slack's Web API and Socket Mode, model APIs, the Kubernetes API, Loki, Elasticsearch, GitHub,
an action receiver, OTLP), the real servers the tests start themselves (Prometheus, Alertmanager, PostgreSQL, MCP
servers written with the SDK, `opsagent serve` as a process), and the Slack bot wired to them (`slack_bot`).

- `fakes/`     local servers speaking real protocols.
- `servers/`   real servers and processes, started and stopped by the tests.
- `slack_bot`  the Slack app on the fake Slack, as `opsagent serve --http` wires it.

Imported by `tests/` and `python -m bench` as the package it is (never through `sys.path`); left out of the wheel.
"""
