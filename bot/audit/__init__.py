"""The append-only audit trail: who did what to which run, and when.

It writes through a one-method sink (`AuditSink`), so everything above can record without knowing the store; the
log's port (`AuditLog`, kept by the run store) adds reading it back, for drafts.
"""
