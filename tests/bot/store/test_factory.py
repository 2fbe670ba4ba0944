"""Opening the store a URL names (`bot.store.factory`)."""

from __future__ import annotations

import pytest

from bot.store.factory import open_store, sqlite_path


def test_open_store_picks_by_url_and_refuses_unknown_schemes(tmp_path) -> None:
    assert sqlite_path("sqlite:///runs.db") == "runs.db"
    assert sqlite_path(f"sqlite:///{tmp_path}/runs.db") == f"{tmp_path}/runs.db"
    with pytest.raises(ValueError, match=r"sqlite:////absolute/path\.db"):
        sqlite_path("sqlite://host/runs.db")
    with pytest.raises(ValueError, match="unknown run store URL scheme 'mysql' in 'db/x'"):
        open_store("mysql://user:pw@db/x")
