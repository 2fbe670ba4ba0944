"""Real servers the tests start and stop: Prometheus, Alertmanager, PostgreSQL, and `opsagent serve` itself,
with the lifecycle every local server shares (a free 127.0.0.1 port, a context manager)."""
