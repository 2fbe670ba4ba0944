"""The durable run store: what the bot keeps across restarts and shares across replicas, as one port per concept.

A consumer asks for the port it uses, never for the whole store; only the wiring (`bot.app`, `bot.serve`, the
command line) holds a `RunStore` (`protocol`), the composition of the ports, to hand them out:

- `runs: RunRecords`: the run service and its journey write; the door, alerts, viewer, drafts, memory and reports
  read, through `RunLookup`.
- `leases: Leases`: the run supervisor and the replica duties.
- `dedupe: Dedupe`: the Slack door.
- `topics: Topics`: the replica duties listen; the run service notifies, and so does the app for the broker.
- `approvals: ApprovalStore` (`bot.approvals.store`): the approval broker.
- `audit: AuditLog` (`bot.audit.trail`): the audit trail appends through it (`AuditSink`); drafts read it.
- `alert_threads: AlertThreads`: the alert receiver.
- `feedback: FeedbackStore`: the feedback service, the gate, drafts and `eval export`.
- `memory: IncidentStore`: the run memory and `opsagent memory`.
- `side_effects: SideEffectStore`: the action journal (`journal`) and drafts.

Where a port lives: in the room that owns its concept, low enough for the store and every consumer to import it.
Approvals and the audit log sit below the store, so their ports stay in their rooms; every other concept is the
store's own (its records are in `records`, and its users all sit above the store), so its port is in `ports`.

`sql` is the one adapter: a small class per port over one shared `Database` (SQLite or PostgreSQL); `factory`
opens it from a URL. `journal` adapts the side-effect port to the tools' `ActionJournal`; `settings` is `[store]`.
"""
