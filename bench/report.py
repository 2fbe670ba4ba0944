"""Markdown tables for the README from the suites' results, and the JSON record in `bench/results/latest.json`.

Every target is shown next to its number with PASS or MISS; nothing is hidden when a target is missed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results" / "latest.json"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "**MISS**"


def table(head: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def machine(info: dict[str, Any]) -> str:
    return (
        f"Machine: {info['cores']} cores, Python {info['python']} ({info['platform']}); "
        f"mode: {info['mode']}; total time {info['total_s']:.1f} s."
    )


def overhead(r: dict[str, Any]) -> str:
    rows = [
        [
            r_["steps"],
            f"{r_['ours_us']:.0f}",
            f"{r_['baseline_us']:.0f}",
            f"{r_['ratio']:.2f}",
            "≤ 0.70",
            verdict(r_["ratio"] <= r["ratio_target"]),
        ]
        for r_ in r["rows"]
    ]
    lo, hi = r["scaling_sizes"]
    rows.append([f"ours {hi}/{lo} per-step", "", "", f"{r['scaling']:.2f}", "≤ 1.05", verdict(r["scaling_pass"])])
    head = ["steps", "ours µs/step", "baseline µs/step", "ratio", "target", ""]
    note = f"CPU time per model turn (N tool steps + finish), instant model and tool, median of {r['reps']} interleaved repetitions."
    return f"### (a) Kernel overhead per step\n{note}\n\n" + table(head, rows)


def concurrency(r: dict[str, Any]) -> str:
    ours, base = r["ours"], r["baseline"]
    rows = [
        ["wall time (s)", f"{ours['wall_s']:.3f}", f"{base['wall_s']:.3f}", "", ""],
        [
            "wall / ideal",
            f"{ours['wall_ratio']:.2f}",
            f"{base['wall_ratio']:.2f}",
            "ours ≤ 1.15",
            verdict(r["wall_pass"]),
        ],
        ["CPU µs per model turn", f"{ours['cpu_us_per_turn']:.0f}", f"{base['cpu_us_per_turn']:.0f}", "", ""],
        [
            "peak memory per run (KiB)",
            f"{ours['peak_kib_per_run']:.1f}",
            f"{base['peak_kib_per_run']:.1f}",
            "ours ≤ baseline",
            verdict(r["memory_pass"]),
        ],
    ]
    note = (
        f"{r['runs']} concurrent runs × {r['steps']} steps + finish, {r['latency_s'] * 1000:.0f} ms per model call, "
        f"~1 KB tool output; ideal wall = {r['steps'] + 1} × {r['latency_s']} s = {r['ideal_s']:.2f} s; "
        f"median of {r['reps']} gathers; memory: tracemalloc peak during one gather / {r['runs']}."
    )
    return f"### (b) Concurrency\n{note}\n\n" + table(["", "ours", "baseline", "target", ""], rows)


def chaos(r: dict[str, Any]) -> str:
    rows = []
    for row in r["rows"]:
        rows.append(
            [
                f"p={row['p']}, q={row['q']}",
                f"{row['ours_pct']:.1f}%",
                f"{row['baseline_pct']:.1f}%",
                f"{row['ceiling_pct']:.1f}%",
                f"{row['only_ours']} / {row['only_baseline']}",
                verdict(row["pass"]),
            ]
        )
    head = ["faults", "ours", "baseline", "ceiling", "only ours / only baseline", "ours ≥ ceiling − 1"]
    note = (
        f"{r['seeds']} paired seeded runs per setting; 8 distinct calls then finish within {r['max_calls']} calls; "
        "p: fault per model call, q: exception per tool attempt."
    )
    stops = "\n".join(
        f"- p={row['p']}, q={row['q']}: ours {_stops(row['ours_stops'])}; baseline {_stops(row['baseline_stops'])}"
        for row in r["rows"]
    )
    s = r["stuck"]
    stuck = table(
        ["stuck model (same failing call forever)", "calls before stop", "stop reason"],
        [["ours", s["ours_calls"], s["ours_stop"]], ["baseline", s["baseline_calls"], s["baseline_stop"]]],
    )
    tail = (
        f"Stuck model: ours stops well before {s['max_calls']} (≤ {s['max_calls'] // 2}): {verdict(s['pass'])}. "
        f"Exceptions escaping a run: {r['escaped']} (target 0): {verdict(r['escaped'] == 0)}."
    )
    return f"### (c) Chaos\n{note}\n\n{table(head, rows)}\n\nStop reasons:\n{stops}\n\n{stuck}\n\n{tail}"


def _stops(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def tokens(r: dict[str, Any]) -> str:
    rows = [
        [
            "prompt tokens (sum over the run)",
            r["ours_tokens"],
            r["baseline_tokens"],
            f"{r['ratio']:.2f}",
            "≤ 0.60",
            verdict(r["pass"]),
        ],
        [
            "independent count: chars / 4 of what was sent",
            r["ours_sent_chars_div4"],
            r["baseline_sent_chars_div4"],
            "",
            "",
            "",
        ],
    ]
    head = ["", "ours", "baseline", "ratio", "target", ""]
    kib = r["output_kib"]
    note = f"{r['steps']}-step scripted investigation (metrics, logs, files, pods), outputs {min(kib)}–{max(kib)} KiB, then finish."
    pager = r["pager"]
    reach = (
        f"Ours' reported usage equals a per-piece re-count of what the model was sent: {r['ours_count_matches']}.\n\n"
        f"Reachability: {len(r['truncated_steps'])} steps truncated in view {r['truncated_steps']}, "
        f"{len(r['elided_steps'])} elided from view by the end {r['elided_steps']}; "
        f"trace `full_output(step)` equals the original for {r['trace_recoverable']}/{r['steps']}; "
        f"a model paging with `read_output` recovered {pager['recovered']}/{r['steps']} exactly "
        f"({pager['read_output_calls']} calls, {pager['pages_cut_by_truncation']} pages themselves truncated in view): "
        f"{verdict(r['reachable_pass'])}."
    )
    if pager["problems"]:
        reach += "\nPager problems: " + "; ".join(pager["problems"])
    return f"### (d) Prompt tokens\n{note}\n\n{table(head, rows)}\n\n{reach}"


def markdown(results: dict[str, Any]) -> str:
    parts = [machine(results["machine"])]
    for key, render in (("overhead", overhead), ("concurrency", concurrency), ("chaos", chaos), ("tokens", tokens)):
        if key in results:
            parts.append(render(results[key]))
    return "\n\n".join(parts) + "\n"


def save(results: dict[str, Any], path: Path = RESULTS) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    return path
