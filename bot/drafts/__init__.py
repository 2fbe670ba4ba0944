"""Drafts made from an investigation's records: “@opsagent postmortem” (a Markdown file) and “@opsagent status” (a
stakeholder update). The facts come from the run store and the thread; a model writes only the narrative.

- `service.py`   the draft service: admitted asks, one task per draft, the upload or the message.
- `facts.py`     what a draft is built from: the run's trace, its audit events, the thread's messages.
- `postmortem.py` the postmortem draft; `status.py` the status update.
- `narrative.py` the model's part, fenced and checked; `markdown.py` Markdown that is safe to paste.
"""
