"""The one SQL adapter of the store's ports, for SQLite and PostgreSQL alike.

`SqlRunStore` (`store`) is one small class per port (`runs`, `dedupe`, `side_effects`…) over one shared `Database`
(`database`), whose dialects (`sqlite`, `postgres`) differ only in how a statement reaches them, their migrations'
transactions (`schema`) and their pub/sub. Only `bot.store.factory` imports this package.
"""
