"""The append-only audit trail: who did what to which run, and when.

It writes through a one-method sink (the run store), so everything above can record without knowing the store.
"""
