"""Our bot wired to the fakes, as `opsagent serve` wires it: the Slack app in HTTP mode, the Alertmanager
receiver, the trace viewer, and the fault tests' world of real bot processes."""
