"""`discover`'s cache: answers kept for their time to live, the least recently used dropped past the bound."""

from __future__ import annotations

from opsagent_tools.discovery import DiscoveryCache


def test_the_cache_forgets_expired_answers_and_drops_the_least_recently_used():
    now = [0.0]
    cache = DiscoveryCache(ttl_s=10, max_entries=2, clock=lambda: now[0])
    cache.put("a", "A")
    cache.put("b", "B")
    assert cache.get("a") == "A"  # a is now the most recently used
    cache.put("c", "C")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("A", None, "C")
    now[0] = 10.0
    assert cache.get("a") is None
    assert len(cache) == 1
