"""Suite (p): the text parser's cost per reply: the canonical fast path against the full parser, same replies.

The parser runs on every text-protocol turn; a thought labelled `Thought:` should cost what an unlabelled one does.
"""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any

from kernel import parse_output, text_turn
from kernel.parsing.reply import _canonical, _parse  # white-box: the fast path against the full parser

THOUGHT = (
    "Known: checkout 5xx rose to 12% at 10:41 (step 1); the deploy of 4f2a landed at 10:39 (step 2).\n"
    "Missing: whether the errors come from one pod or all of them.\n"
    "Why: a per-pod error rate separates a bad node from a bad release."
)
ARGS = {"query": 'sum(rate(http_requests_total{job="checkout",code=~"5.."}[5m])) by (pod)', "window": "30m"}
REPLIES = {
    "unlabelled": text_turn("query_metrics", THOUGHT, **ARGS),
    "Thought: label": text_turn("query_metrics", "Thought: " + THOUGHT.replace("\n", " "), **ARGS),
    "**Thought:** label": text_turn("query_metrics", "**Thought:** " + THOUGHT.replace("\n", " "), **ARGS),
}
BATCH = 500
LABEL_RATIO_TARGET = 1.25
"""A labelled reply may cost at most this much more than the unlabelled one."""
PARSERS = {"parse_output": parse_output, "full_parser": _parse}


def _batch_us(parse: Any, text: str) -> float:
    """The CPU time of one call, averaged over a batch, in µs."""
    began = time.process_time()
    for _ in range(BATCH):
        parse(text)
    return (time.process_time() - began) / BATCH * 1e6


def parsing(reps: int) -> dict[str, Any]:
    """(p) `parse_output` and the full parser alone on each reply, interleaved batches, median of `reps`."""
    samples: dict[tuple[str, str], list[float]] = {(reply, parser): [] for reply in REPLIES for parser in PARSERS}
    for rep in range(reps + 1):
        gc.collect()
        for (reply, parser), times in samples.items():
            spent = _batch_us(PARSERS[parser], REPLIES[reply])
            if rep:  # the first round warms the regex caches and the allocator
                times.append(spent)
    rows = []
    for reply, text in REPLIES.items():
        ours, full = (statistics.median(samples[reply, parser]) for parser in PARSERS)
        rows.append(
            {
                "reply": reply,
                "fast_path": _canonical(text) is not None,
                "parse_output_us": ours,
                "full_parser_us": full,
                "speedup": full / ours,
            }
        )
    plain = rows[0]["parse_output_us"]
    for row in rows:
        row["vs_unlabelled"] = row["parse_output_us"] / plain
    return {
        "reps": reps,
        "batch": BATCH,
        "rows": rows,
        "label_ratio_target": LABEL_RATIO_TARGET,
        "label_pass": all(row["vs_unlabelled"] <= LABEL_RATIO_TARGET for row in rows),
    }
