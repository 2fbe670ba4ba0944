"""Alertmanager's webhook (`POST /alertmanager`): each firing alert group opens an investigation thread.

The payload model, the receiver (which keeps each group's thread in the store's `AlertThreads`), and the facts the
thread's messages say (`bot.slack.alert_blocks` makes them Block Kit).
"""
