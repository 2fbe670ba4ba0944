"""Alertmanager's webhook (`POST /alertmanager`): each firing alert group opens an investigation thread.

The payload model, the receiver, the memory of which thread holds which group, and the thread's messages.
"""
