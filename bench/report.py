"""Markdown tables for the README from the suites' results, and the JSON record in `bench/results/latest.json`.

Every target is shown next to its number with PASS or MISS; nothing is hidden when a target is missed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import token_bench

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
            f"≤ {r['ratio_target']:.2f}",
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
            f"ours ≤ {r['wall_target']:.2f}",
            verdict(r["wall_pass"]),
        ],
        ["CPU µs per model turn", f"{ours['cpu_us_per_turn']:.0f}", f"{base['cpu_us_per_turn']:.0f}", "", ""],
        [
            "peak memory per run (KiB)",
            f"{ours['peak_kib_per_run']:.1f}",
            f"{base['peak_kib_per_run']:.1f}",
            f"ours ≤ {r['memory_target_kib']:.1f} (20 KB)",
            verdict(r["memory_pass"]),
        ],
    ]
    note = (
        f"{r['runs']} concurrent runs × {r['steps']} steps + finish, {r['latency_s'] * 1000:.0f} ms per model call, "
        f"~1 KB tool output; ideal wall = {r['steps'] + 1} × {r['latency_s']} s = {r['ideal_s']:.2f} s; "
        f"median of {r['reps']} gathers; memory: tracemalloc peak during one gather / {r['runs']}."
    )
    return f"### (b) Concurrency\n{note}\n\n" + table(["", "ours", "baseline", "target", ""], rows)


def parallel_reads(r: dict[str, Any]) -> str:
    ms = r["read_s"] * 1000
    rows = [
        [
            "one turn, three calls at once",
            f"{r['parallel_s']:.3f}",
            f"{r['ratio']:.2f}",
            f"≤ {r['target']:.2f}",
            verdict(r["pass"]),
        ],
        ["three turns, one call each", f"{r['sequential_s']:.3f}", f"{r['sequential_ratio']:.2f}", "", ""],
    ]
    note = (
        f"Three reads of {ms:.0f} ms each (`asyncio.sleep`), an instant model, then finish; the run's wall time, "
        f"median of {r['reps']}, against the slowest call ({ms:.0f} ms)."
    )
    head = ["", "wall time (s)", "/ slowest call", "target", ""]
    return f"### (e) Parallel reads\n{note}\n\n" + table(head, rows)


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
    prose = r["prose_ending"]
    ending = (
        f"Ending in prose instead of `finish` (the reminder, then the model confirms): "
        f"{prose['prose_turns']} turns instead of {prose['finish_turns']} (+{prose['extra_turns']}), "
        f"{prose['prose_prompt_tokens']} prompt tokens instead of {prose['finish_prompt_tokens']} "
        f"(+{prose['extra_prompt_tokens']}, +{prose['extra_pct']:.1f} % of the run)."
    )
    return f"### (d) Prompt tokens\n{note}\n\n{table(head, rows)}\n\n{reach}\n\n{ending}"


def slack(r: dict[str, Any]) -> str:
    a, c = r["ack"], r["calls"]

    def ms(key: str) -> list[str]:
        return [f"{a[key][q]:.1f}" for q in ("p50", "p99", "max")]

    rows = [
        ["event → HTTP 200, at the sender", *ms("ack_ms"), f"p99 < {a['target_p99_ms']:.0f}", verdict(a["pass"])],
        ["Bolt `async_dispatch` inside the app", *ms("dispatch_ms"), "", ""],
        ["app event-loop lag (5 ms sleeper)", *ms("loop_lag_ms"), "", ""],
    ]
    note = (
        f"{a['mentions']} signed `app_mention` events at {a['rate_per_s']}/s for {a['seconds']} s, across "
        f"{a['channels']} channels, each its own thread, POSTed to `/slack/events` without waiting for answers; "
        f"each starts a run of {a['run_steps']} instant tool steps + finish. Slack (fake Web API and event sender) "
        f"is a child process, the app alone in this one. `max_concurrent_runs={a['max_concurrent_runs']}` and "
        f"`post_interval_s={a['post_interval_s']:g}`, so neither the run cap nor per-channel pacing is measured."
    )
    statuses = ", ".join(f"{status} × {n}" for status, n in a["statuses"].items())
    others = "n/a" if a["others_cpu_s"] is None else f"{a['others_cpu_s']:.1f} CPU-s"
    tail = (
        f"Runs completed in Slack (✅): {a['completed']}/{a['mentions']}, the last {a['drain_s']:.2f} s after the "
        f"sending ended; HTTP statuses {statuses}; Web API calls {a['api_calls']}, failed {a['api_errors']}. "
        f"CPU over {a['app_wall_s']:.1f} s: app {a['app_cpu_s']:.1f} s, Slack side {a['slack_cpu_s']:.1f} s, "
        f"other processes on the machine {others}; sends ran up to {a['send_lateness_max_ms']:.0f} ms late."
    )
    head = ["ms", "p50", "p99", "max", "target", ""]
    runs = [("instant steps", r["calls"]), (f"steps of {r['paced']['step_s']:g} s", r["paced"])]
    calls = []
    for label, c in runs:
        calls += [
            [
                f"{label}: all calls the fake received",
                c["calls"],
                f"{c['per_step']:.2f}",
                f"≤ {c['target']}",
                verdict(c["pass"]),
            ],
            [
                f"{label}: less Bolt's once-per-process `auth.test`",
                c["calls_per_run"],
                f"{c['per_step_per_run']:.2f}",
                "",
                "",
            ],
            [f"{label}: calls refused (errors, Block Kit limits)", c["errors"], "", "0", verdict(c["errors"] == 0)],
        ]
    calls.append(
        [
            f"texts over Slack's {r['calls']['text_limit']:,} characters",
            sum(c["truncated"] for _, c in runs),
            "",
            "0",
            verdict(all(c["truncated"] == 0 for _, c in runs)),
        ]
    )
    notes = []
    for label, c in runs:
        breakdown = ", ".join(f"`{method}` {n}" for method, n in c["by_method"].items())
        notes.append(f"{label}: {breakdown}" + ("" if c["finished"] else " — **the run did not finish**"))
        if c["failed"]:
            notes.append("refused: " + "; ".join(c["failed"]))
    calls_note = (
        f"One {r['calls']['steps']}-step investigation (then finish), twice: instant steps, and steps of "
        f"{r['paced']['step_s']:g} s (slower than Slack's spacing of posts, as most are). Production settings: "
        "posts spaced per channel, a step's reply waits `step_batch_s` for the next ones to join it, the summary "
        "kept current by chat.update. By method — " + "; ".join(notes) + "."
    )
    calls_table = table(["Web API calls", "calls", "per step", "target", ""], calls)
    limits = [
        [
            label,
            c["summary_updates"],
            "n/a" if c["min_update_gap_s"] is None else f"{c['min_update_gap_s']:.2f}",
            c["updates_in_busiest_minute"],
            c["refused_updates"],
            verdict(c["limits_pass"]),
        ]
        for label, c in runs
    ]
    limits_table = table(
        [
            "chat.update, fake enforcing Slack's limits",
            "summary updates",
            "least gap (s) ≥ 1",
            "most in 60 s ≤ 50",
            "429s",
            "",
        ],
        limits,
    )
    return (
        f"### (s) Slack bot, HTTP mode\n{note}\n\n{table(head, rows)}\n\n{tail}\n\n{calls_note}\n\n{calls_table}"
        f"\n\n{limits_table}"
    )


def replicas(r: dict[str, Any]) -> str:
    sqlite, one, two = r["rows"]
    rows_ = (sqlite, one, two)
    ratios = r["ratios"]

    def each(render: Any) -> list[str]:
        return [render(row) for row in rows_]

    def ms(q: str) -> Any:
        return lambda row: f"{row['click_to_action_ms'][q]:.0f}"

    def others(row: dict[str, Any]) -> str:
        busy = row["machine_busy_cores"]
        if busy is None:
            return "n/a"
        ours = row["replica_cpu_s"] + row["slack_side_cpu_s"] + row["postgres_cpu_s"]
        return f"{max(0.0, busy * row['wall_s'] - ours):.1f}"

    rows = [
        ["investigations completed (✅)", *each(lambda row: f"{row['completed']}/{row['runs']}"), ""],
        ["wall time (s)", *each(lambda row: f"{row['wall_s']:.2f}"), ""],
        ["investigations per minute", *each(lambda row: f"{row['per_minute']:.0f}"), f"{ratios['per_minute']:.2f}"],
        ["… in each repetition", *each(lambda row: ", ".join(f"{n:.0f}" for n in row["per_minute_each"])), ""],
        ["click → action p50 (ms)", *each(ms("p50")), f"{ratios['p50']:.2f}"],
        ["click → action p95 (ms)", *each(ms("p95")), f"{ratios['p95']:.2f}"],
        ["click → action max (ms)", *each(ms("max")), ""],
        ["actions run / run twice", *each(lambda row: f"{row['actions']} / {row['actions_twice']}"), ""],
        [
            "CPU-s: replicas / PostgreSQL / Slack side and clicker",
            *each(
                lambda row: f"{row['replica_cpu_s']:.1f} / {row['postgres_cpu_s']:.1f} / {row['slack_side_cpu_s']:.1f}"
            ),
            "",
        ],
        ["CPU-s: other processes on the machine", *each(others), ""],
        [
            "replica CPU per investigation (ms)",
            *each(lambda row: f"{row['replica_cpu_s'] / max(1, row['completed']) * 1000:.0f}"),
            "",
        ],
        [
            "machine CPU busy (cores)",
            *each(lambda row: "n/a" if row["machine_busy_cores"] is None else f"{row['machine_busy_cores']:.2f}"),
            "",
        ],
    ]
    refused = sum(row["http_not_200"] for row in rows_)
    head = ["", "SQLite, 1 process", "PostgreSQL, 1 replica", "PostgreSQL, 2 replicas", "2 / 1 replicas"]
    note = (
        f"{r['runs']} signed `app_mention` events POSTed at once per configuration (to the replicas in turn), "
        f"{r['reps']} repetitions of each, interleaved, pooled (runs and wall times summed, latencies pooled); each run: "
        f"{r['probes']} instant checks, a `rollback_deployment` behind an approval, finish; every model call takes "
        f"{r['model_latency_s'] * 1000:.0f} ms (ScriptedModel `latency`). A clicker POSTs Approve as soon as the "
        "approval message reaches the fake Slack; click → action is from that POST to the rollback tool starting, "
        "in the replica (CLOCK_MONOTONIC, one clock for all processes). With 2 replicas every click goes to the "
        "replica **not** running the run, so it measures the relay: compare-and-set in PostgreSQL, NOTIFY, the "
        "owner's LISTEN wakes the run; with 1 replica the click wakes the run in-process. Each replica is its own "
        "process (the app in HTTP mode on its own port, its own connection pool); PostgreSQL, the fake Slack and "
        "the clicker are the other processes. Wall time: first mention to last ✅. "
        f"HTTP answers other than 200: {refused}."
    )
    return f"### (r) Replicas on one PostgreSQL\n{note}\n\n" + table(head, rows)


def parsing(r: dict[str, Any]) -> str:
    rows = [
        [
            row["reply"],
            "yes" if row["fast_path"] else "no",
            f"{row['parse_output_us']:.1f}",
            f"{row['full_parser_us']:.1f}",
            f"{row['vs_unlabelled']:.2f}",
            f"≤ {r['label_ratio_target']:.2f}",
            verdict(row["vs_unlabelled"] <= r["label_ratio_target"]),
        ]
        for row in r["rows"]
    ]
    head = ["reply", "fast path", "parse_output µs", "full parser µs", "vs unlabelled", "target", ""]
    note = (
        f"CPU time of one parse of our own reply format (a thought, then one fenced JSON action), median of "
        f"{r['reps']} interleaved batches of {r['batch']}; the full parser is what a reply costs without the fast path."
    )
    return f"### (p) Text parser\n{note}\n\n" + table(head, rows)


def regexes(r: dict[str, Any], shown: int = 15) -> str:
    def row(item: dict[str, Any]) -> list[str]:
        over = item["ms"] is None
        worst = f"> {r['cap_s'] * 1000:,.0f} (killed)" if over else f"{item['ms']:.2f}"
        where = str(item["input"]).replace("|", "\\|")
        ok = not over and item["ms"] <= r["target_ms"]
        return [f"`{item['pattern']}`", ", ".join(item["uses"]), where, worst, verdict(ok)]

    head = ["pattern", "applied with", "worst input", "worst ms", f"≤ {r['target_ms']:g} ms"]
    rows = [row(item) for item in r["rows"]]
    note = (
        f"Every module-level compiled regex of kernel, opsagent_tools and bot ({r['patterns']}, found by importing "
        f"them), applied as the code applies it to each of its hostile inputs of {r['length']:,} characters "
        f"(generated from its own characters and literals, plus unbalanced quotes, nested openers, long runs); the "
        f"worst time of each, slowest first ({r['seconds']:.0f} s in all). All within the target: {verdict(r['pass'])}."
    )
    rest = f"<details><summary>All {len(rows)} patterns</summary>\n\n{table(head, rows)}\n\n</details>"
    return f"### (x) Regexes on hostile text\n{note}\n\n{table(head, rows[:shown])}\n\n{rest}"


def markdown(results: dict[str, Any], more: tuple[tuple[str, Callable[[Any], str]], ...] = ()) -> str:
    """The report; `more`: the renderers of suites that render themselves (they import this module's tables)."""
    parts = [machine(results["machine"])]
    renderers = (("overhead", overhead), ("concurrency", concurrency), ("chaos", chaos), ("tokens", tokens))
    renderers += (("token_suite", token_bench.markdown),)
    renderers += (("parallel", parallel_reads),)
    renderers += (("slack", slack), ("replicas", replicas), ("parsing", parsing), ("regexes", regexes), *more)
    for key, render in renderers:
        if key in results:
            parts.append(render(results[key]))
    return "\n\n".join(parts) + "\n"


def save(results: dict[str, Any], path: Path = RESULTS) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    return path
