"""De-dup keys in SQL: the `Dedupe` port over one `Database`."""

from __future__ import annotations

import secrets
from datetime import timedelta

from bot.store.sql.database import Database


class SqlDedupe:
    """`Dedupe` on the `dedup_keys` table: one upsert per key."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def remember(self, key: str, ttl_s: float) -> bool:
        """True the first time a key is seen (or after it expired), False while it is remembered.

        A random token marks who wrote the key, so a re-sent call still learns that it was first.
        """
        now, token = self._db.now(), secrets.token_hex(16)
        rows = await self._db.fetch(
            "INSERT INTO dedup_keys (key, token, expires_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET "
            "token = CASE WHEN dedup_keys.expires_at <= $4 THEN excluded.token ELSE dedup_keys.token END, "
            "expires_at = CASE WHEN dedup_keys.expires_at <= $4 THEN excluded.expires_at "
            "ELSE dedup_keys.expires_at END RETURNING token",
            key,
            token,
            now + timedelta(seconds=ttl_s),
            now,
        )
        return rows[0]["token"] == token
