"""Slack presentation and transport only: Block Kit builders, mrkdwn, the outbox, the run's thread, approval UI.

Pure builders and a rate-limited outbox; nothing here decides anything about a run.
"""
