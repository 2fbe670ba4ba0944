"""The durable run store: runs, approvals, de-dup keys, side effects, alert threads and the audit log.

One protocol (`protocol`), its records, the SQL both dialects share, SQLite and PostgreSQL, and `open_store`.
"""
