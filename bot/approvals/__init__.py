"""Approvals of side effects: who may approve, the record of each request, and what a click comes to.

The broker binds each approval to one exact call and decides every click server-side; Slack only shows it.
"""
