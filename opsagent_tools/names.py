"""The nearest known names to one that names nothing, and the sentence every tool says it in.

A query for a service, label, index or runbook that does not exist should not end at "nothing found": every
tool lists what does exist, closest first, in the same words, so the model's next call can use a real name.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence

NEAREST = 3
"""Nearest names offered."""
SPELLING_CUTOFF = 0.5
"""difflib's similarity ratio for a close spelling ("servce_name" → service_name is 0.96; "service" → env, 0.4,
is not close)."""
PREFIX_BONUS = 0.05
"""Added to the similarity per shared leading character (up to 6)."""
LISTED = 30
"""Known names listed after the nearest ones, before "(+N more)"."""


def nearest_names(name: str, known: Iterable[str], limit: int = NEAREST) -> list[str]:
    """Known names that contain `name` or are contained in it ("order" → order-service), then close spellings
    ("ordr" → order-service; names that start alike first), case-insensitively; `name` itself is not "near"."""
    wanted = name.strip()
    needle = wanted.lower()
    candidates = [k for k in dict.fromkeys(known) if k and k != wanted]
    if not needle:
        return []
    containing = [k for k in candidates if needle in k.lower() or k.lower() in needle]
    by_lower: dict[str, str] = {}
    for k in candidates:
        by_lower.setdefault(k.lower(), k)
    scored = [(_similarity(needle, k), k) for k in by_lower]
    ranked = sorted((s for s in scored if s[0] >= SPELLING_CUTOFF), key=lambda s: -(s[0] + _prefix_bonus(needle, s[1])))
    close = [k for _, k in ranked]
    return list(dict.fromkeys(containing + [by_lower[c] for c in close]))[:limit]


def _similarity(needle: str, name: str) -> float:
    """difflib's ratio; a name that holds every letter of the needle in order ("ordr" in order-service) counts
    as just close enough."""
    matcher = difflib.SequenceMatcher(None, needle, name)
    ratio = matcher.ratio() if matcher.quick_ratio() >= SPELLING_CUTOFF else 0.0
    if ratio < SPELLING_CUTOFF and len(needle) >= 3 and _in_order(needle, name):
        return SPELLING_CUTOFF
    return ratio


def _in_order(needle: str, name: str) -> bool:
    letters = iter(name)
    return all(char in letters for char in needle)


def _prefix_bonus(a: str, b: str) -> float:
    """Names that start alike rank higher: "orders" is nearer "order-service" than "payment-service" is."""
    shared = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return PREFIX_BONUS * min(shared, 6)


def capped(names: Sequence[str], cap: int = LISTED) -> str:
    """Names as a comma-separated list, with how many more were left out; "none" for no names."""
    if not names:
        return "none"
    more = f" (+{len(names) - cap} more)" if len(names) > cap else ""
    return ", ".join(names[:cap]) + more


def unknown_name(
    what: str, name: str, known: Sequence[str], *, where: str, plural: str | None = None, cap: int = LISTED
) -> str:
    """The observation for a `name` that names nothing: the nearest known names, then the known ones.

    'No service "ordr" has logs in this window. Nearest: order-service. Known services (3): gateway,
    order-service, payment-service.' `where` finishes the first sentence; `plural` defaults to `what` + "s".
    """
    near = nearest_names(name, known)
    nearest = f" Nearest: {', '.join(near)}." if near else ""
    many = plural or f"{what}s"
    quoted = json.dumps(name, ensure_ascii=False)
    return f"No {what} {quoted} {where}.{nearest} Known {many} ({len(known)}): {capped(list(known), cap)}."
