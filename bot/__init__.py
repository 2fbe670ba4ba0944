"""The OpsAgent Slack bot and command line: everything between a person (or an alert) and the kernel.

Each room is a subpackage with one concept; imports point down this list, never up (import-linter checks it):

- `cli/`        the `opsagent` command line: demo, investigate, replay, stats, eval, tools, memory, postmortem,
                check, serve.
- `serve.py`    running the Slack bot until SIGTERM: Socket Mode or HTTP, `/healthz`, `/metrics`, routes.
- `eval/`       scenarios with recorded tool outputs, run through the real kernel and scored.
- `agent.py`    the one way to build an `Agent` (and its model) from the configuration.
- `settings.py` the configuration file and environment, composed from each room's own settings.
- `alerts/`     Alertmanager's webhook: a firing alert group opens an investigation thread.
- `viewer/`     the trace viewer: signed links and one HTML page per run.
- `telemetry/`  Prometheus metrics, OpenTelemetry spans, logging set-up and log redaction.
- `api/`        the HTTP API and the MCP server for other agents and tools: bearer tokens, REST, an event stream
                per run, MCP tools; its runs go through the gate, and their side effects still need a person.
- `http_limits/` what one client may hold of the HTTP server: read timeouts, body sizes, a share of connections.
- `app.py`      the Slack app factory: the Bolt app wired to the services below.
- `listeners/`  Slack's door and router: every Bolt listener acks, reads its payload into a request at the door,
                and routes it through the gate to its service with one `match`.
- `drafts/`     the postmortem and status drafts made from a run's records (the model writes only the narrative).
- `verification/` the checks of approved actions: scheduled in the store as an action succeeds, run on time by one
                replica (the symptom read again: held, did not hold, inconclusive), said in the thread and the trace.
- `runs/`       one investigation's life: the service, durability, replica duties, pub/sub topics; the memory of
                past incidents it feeds; feedback on its verdict.
- `gate/`       the one way in: the closed union of requests (investigate, guidance, stop, draft, decide, rate,
                explain…) and the gate that admits or refuses each, logged and audited, before any service.
- `store/`      the durable run store: one port per concept it keeps (runs, leases, de-dup keys, topics, alert
                threads, ratings, incident memory, side effects), `RunStore` composing them with the approvals'
                and the audit log's, and one SQL adapter for SQLite and PostgreSQL. Each room asks for the port it
                uses; a port lives in the room that owns its concept (store, approvals, audit), below its users.
- `slack/`      presentation and transport only: Block Kit, mrkdwn, the outbox, the run thread, approval UI,
                drafts' messages, a thread's history.
- `approvals/`  the approval broker: an approval's life (posted, decided once, expired, voided), its store's port.
- `access/`     who asks and what they may do: askers, identity (workspace, guest, bot, approver) over Slack's
                directory, the limits and their ledger, refusals as facts, the `[access]` settings.
- `audit/`      the append-only audit trail, written through a one-method sink; the audit log's port.
- `verdict.py`  one model of a run's result (verdict, evidence, steps) that Slack, the terminal and the viewer render.
- `verdict_actions.py` every side effect a run proposed and what came of it (done, denied, expired, dry run…),
                from its trace: the verdict's actions, its next steps by hand, a follow-up's and an approval's history.
- `evidence.py` the verdict's evidence: the answer's claims with the steps that back them (cited, or found in their
                output), and what is left of a prose answer once its summary and evidence are shown apart.
- `words.py`    plain-English words that every surface (Slack, viewer, terminal) uses for the same facts.

The rooms' `__init__` modules import nothing (but `listeners`, Bolt's `register_listeners`), so a light command
(`opsagent stats`) loads only what it uses, never the Slack app: import a name from the module that defines it
(`from bot.store.factory import open_store`).
"""
