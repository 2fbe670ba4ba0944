"""The trace viewer: signed, expiring links to one run's page, and the page itself, escaped throughout.

`GET /runs/<id>` on the bot's HTTP server, reading traces from the run store.
"""
