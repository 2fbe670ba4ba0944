"""The terminal a person sees: colour only on a terminal and never with NO_COLOR, for a run and for every report
alike, lines wrapped to a terminal's width and whole in a pipe, the answer's Markdown rendered, cost only when
priced, log lines kept out of stdout, and follow-up questions asked as a Slack thread asks them."""

from __future__ import annotations

import asyncio
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from opsagent_process import environment, on_a_terminal, opsagent

from samples.demo_config import write_demo_config
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_tool_call

COLOUR = re.compile(r"\x1b\[[0-9;]*(?:3[0-9]|4[0-9]|9[0-7])(?:;[0-9]+)*m")
"""An SGR sequence that sets a foreground or background colour."""
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
"""Every control sequence a terminal gets (colour, cursor, the spinner's), and the pty's carriage returns."""
TRACES = Path(__file__).resolve().parents[2] / "fixtures" / "traces"
ANSWER = "**Root cause**: v2.14.0 cut the pool (step 1).\n- restore `max_size: 50`\n- alert on pending requests"


async def test_colour_on_a_terminal_only_and_never_with_no_color(tmp_path):
    code, shown = await on_a_terminal("demo", cwd=tmp_path, env=environment())
    assert code == 0
    assert COLOUR.search(shown), "a terminal gets colour"
    assert "■ finished" in shown
    code, plain = await on_a_terminal("demo", cwd=tmp_path, env=environment(NO_COLOR="1"))
    assert code == 0
    assert "■ finished" in plain
    assert not COLOUR.search(plain), "NO_COLOR: no colour, even on a terminal"
    piped = await opsagent("demo", cwd=tmp_path)
    assert piped.code == 0
    assert "\x1b[" not in piped.out, "a pipe gets plain text"


@pytest.mark.parametrize(
    "command",
    [("stats", TRACES), ("tools", "list"), ("check",), ("replay", TRACES / "v1_demo_text_protocol.json")],
    ids=["stats", "tools list", "check", "replay"],
)
async def test_a_report_has_colour_as_a_run_has_on_a_terminal_only_and_never_with_no_color(
    tmp_path, demo_config, command
):
    args = ("--config", demo_config, *command)
    code, shown = await on_a_terminal(*args, cwd=tmp_path, env=environment())
    assert COLOUR.search(shown), "a terminal gets colour"
    no_colour_code, plain = await on_a_terminal(*args, cwd=tmp_path, env=environment(NO_COLOR="1"))
    assert not COLOUR.search(plain), "NO_COLOR: no colour, even on a terminal"
    piped = await opsagent(*args, cwd=tmp_path)
    assert "\x1b[" not in piped.out, "a pipe gets plain text"
    assert code == no_colour_code == piped.code
    first = piped.out.splitlines()[0]
    assert first in ESCAPES.sub("", shown), "the same words on a terminal"
    assert first in ESCAPES.sub("", plain), "the same words without colour"


async def test_a_report_fits_a_narrow_terminal_and_stays_whole_in_a_pipe(tmp_path):
    code, shown = await on_a_terminal("stats", TRACES, cwd=tmp_path, env=environment(), columns=40)
    assert code == 0
    text = ESCAPES.sub("", shown)
    assert max(map(len, text.splitlines())) <= 40
    piped = await opsagent("stats", TRACES, cwd=tmp_path, env=environment(COLUMNS="40"))
    row = next(line for line in piped.out.splitlines() if line.startswith("search_logs"))
    assert len(row) > 40, "a pipe is not wrapped to COLUMNS"
    assert row.split()[-2:] == ["timeout", "1"], "the row whole, on one line"
    assert sorted("".join(text.split())) == sorted("".join(piped.out.split())), "the terminal loses nothing"


async def test_an_error_is_red_on_a_terminal_and_plain_in_a_pipe(tmp_path):
    _, shown = await on_a_terminal("stats", tmp_path / "nope", cwd=tmp_path, env=environment(), stderr_too=True)
    assert re.search(r"\x1b\[31mopsagent: .*nope is not a directory", shown)
    _, plain = await on_a_terminal(
        "stats", tmp_path / "nope", cwd=tmp_path, env=environment(NO_COLOR="1"), stderr_too=True
    )
    assert not COLOUR.search(plain)
    assert f"opsagent: {tmp_path / 'nope'} is not a directory" in ESCAPES.sub("", plain)
    piped = await opsagent("stats", tmp_path / "nope", cwd=tmp_path)
    assert (piped.code, piped.err) == (2, f"opsagent: {tmp_path / 'nope'} is not a directory\n")


def finish_script(server: FakeModelServer) -> None:
    call = openai_tool_call("c1", "query_metrics", {"service": "order-service", "metric": "http_5xx_rate"})
    finish = openai_tool_call("c2", "finish", {"answer": ANSWER})
    usage = {"prompt_tokens": 1000, "completion_tokens": 100}
    server.script(
        Reply(openai_completion(None, tool_calls=[call], usage=usage)),
        Reply(openai_completion(None, tool_calls=[finish], usage=usage)),
    )


async def test_the_answer_is_rendered_and_cost_shows_only_with_a_price(tmp_path):
    priced = '[llm]\nmodel = "fake-gpt"\nbase_url = "{url}/v1"\n[llm.prices."fake-gpt"]\ninput_per_mtok = 2.5\noutput_per_mtok = 10\n'
    unpriced = '[llm]\nmodel = "fake-gpt"\nbase_url = "{url}/v1"\n'
    outputs = []
    for llm in (unpriced, priced):
        async with FakeModelServer() as server:
            finish_script(server)
            config = write_demo_config(
                tmp_path / str(len(outputs)), datetime.now(UTC), extra=llm.format(url=server.url)
            )
            ran = await opsagent("--config", config, "investigate", "order-service 5xx?", cwd=tmp_path)
        assert ran.code == 0, ran
        outputs.append(ran.out)
    plain, with_cost = outputs
    assert "\n  v2.14.0 cut the pool.\n" in plain, "the summary on its own line, the Markdown rendered"
    assert "**" not in plain
    assert "• restore max_size: 50" in plain
    footer = next(line for line in plain.splitlines() if " tokens · " in line)
    assert "$" not in footer, "no price configured: no cost"
    assert re.search(r"1 step · 2\.2k tokens · \$0\.0070 · [0-9.]+ m?s · stop: finish", with_cost)
    assert "evidence: v2.14.0 cut the pool. (step 1)" in plain, "the gate's view of the answer, as in Slack"


async def test_a_turn_of_reads_in_parallel_shows_as_one_group(tmp_path):
    reads = [
        openai_tool_call("c1", "compare_refs", {"base": "v2.13.2", "head": "v2.14.0"}),
        openai_tool_call("c2", "read_repo_file", {"path": "config/database.yaml", "ref": "v2.14.0"}),
        openai_tool_call("c3", "query_metrics", {"service": "order-service", "metric": "http_5xx_rate"}),
    ]
    finish = openai_tool_call("c4", "finish", {"answer": ANSWER})
    async with FakeModelServer() as server:
        server.script(
            Reply(openai_completion(None, tool_calls=reads)), Reply(openai_completion(None, tool_calls=[finish]))
        )
        llm = f'[llm]\nmodel = "fake-gpt"\nbase_url = "{server.url}/v1"\n'
        config = write_demo_config(tmp_path, datetime.now(UTC), extra=llm)
        ran = await opsagent("--config", config, "investigate", "order-service 5xx?", cwd=tmp_path)
    assert ran.code == 0, ran
    lines = ran.out.splitlines()
    head = lines.index("⇉ 3 reads in parallel: steps 1, 2, 3")
    assert lines[head + 1 : head + 4] == [
        '  … step 1: compare_refs(base="v2.13.2", head="v2.14.0")',
        '  … step 2: read_repo_file(path="config/database.yaml", ref="v2.14.0")',
        '  … step 3: query_metrics(service="order-service", metric="http_5xx_rate")',
    ]
    done = [line.split(" · ")[0] for line in lines[head + 4 :] if line.startswith(("✓ step", "✗ step"))]
    assert [line[2:].split("(")[0] for line in done] == [
        "step 1 compare_refs",
        "step 2 read_repo_file",
        "step 3 query_metrics",
    ]


async def test_log_lines_go_to_stderr_or_the_log_file_never_into_the_view(tmp_path):
    ran = await opsagent("demo", cwd=tmp_path)
    assert "side_effect_refused" in ran.err, "the denied rollback is logged"
    assert "side_effect_refused" not in ran.out
    logged = tmp_path / "opsagent.log"
    quiet = await opsagent("demo", "--log-file", logged, cwd=tmp_path)
    assert quiet.code == 0
    assert "side_effect_refused" not in quiet.err + quiet.out
    assert "side_effect_refused" in logged.read_text()


async def test_interactive_follow_ups_carry_the_earlier_task_and_answer(tmp_path):
    config = write_demo_config(tmp_path, datetime.now(UTC))
    async with FakeModelServer() as server:
        finish_script(server)
        follow_up = openai_tool_call("c3", "finish", {"answer": "The gateway only relays the 503s (step 1)."})
        server.script(Reply(openai_completion(None, tool_calls=[follow_up])))
        env = environment(OPSAGENT_LLM_BASE_URL=f"{server.url}/v1", OPSAGENT_LLM_MODEL="fake-gpt")
        ran = await opsagent(
            "--config", config, "investigate", "order-service 5xx?", "--interactive",
            cwd=tmp_path, env=env, stdin=b"and the gateway?\n",
        )  # fmt: skip
    assert ran.code == 0, ran
    asked = server.bodies[2]["messages"][-1]["content"]
    task, fenced = asked.split("\n\n", 1)
    assert task == "Task: and the gateway?", "the earlier answer is model output: data, never the task"
    assert (
        "Earlier in this conversation you investigated: order-service 5xx?\n"
        "Your answer then: **Root cause**: v2.14.0 cut the pool (step 1)."
    ) in fenced.split("<data-", 1)[1], "the same follow-up data as a Slack thread's, fenced"
    assert ran.out.count("follow-up question (an empty line ends the session): ") == 2
    assert "\n  The gateway only relays the 503s.\n" in ran.out, "the follow-up's answer"
    traces = sorted((tmp_path / "traces").glob("*.json"))
    assert len(traces) == 2
    tasks = {json.loads(path.read_text())["task"].split("\n")[0] for path in traces}
    assert tasks == {"order-service 5xx?", "and the gateway?"}


async def test_in_a_pipe_each_line_of_the_verdict_and_the_approval_stays_whole(tmp_path):
    piped = await opsagent("demo", cwd=tmp_path)
    assert piped.code == 0, piped
    lines = piped.out.splitlines()
    verdict = lines[next(i for i, line in enumerate(lines) if line.startswith("■ finished")) + 1 :]
    claims = [line for line in verdict if line.startswith(("  evidence: ", "  ruled out: "))]
    assert len(claims) >= 2
    assert all(re.search(r"\(steps? [0-9, ]+\)$", line) for line in claims), "a claim and its steps on one line"
    assert verdict[0].startswith("  Deploy v2.14.0"), "the summary on one line"
    assert verdict[0].endswith("answers 503."), "not padded to the width"
    why = next(i for i, line in enumerate(lines) if line.startswith("  why: "))
    assert lines[why + 1].startswith("    Hypothesis: "), "a reason's later lines are indented under it"


async def test_a_line_typed_while_an_interactive_run_goes_is_guidance_for_it(tmp_path):
    """On a terminal, `investigate --interactive` takes a line typed while the run goes as guidance: the model's next
    request carries it in the name of whoever typed it; the follow-up prompt comes after, as before."""
    config = write_demo_config(tmp_path, datetime.now(UTC))
    call = openai_tool_call("c1", "query_metrics", {"service": "order-service", "metric": "http_5xx_rate"})
    finish = openai_tool_call("c2", "finish", {"answer": ANSWER})
    async with FakeModelServer() as server:
        server.script(
            Reply(openai_completion(None, tool_calls=[call]), delay=1.5),  # the person types while the model thinks
            Reply(openai_completion(None, tool_calls=[finish])),
        )
        env = environment(OPSAGENT_LLM_BASE_URL=f"{server.url}/v1", OPSAGENT_LLM_MODEL="fake-gpt", COLUMNS="200")

        async def type_while_the_model_thinks(terminal: int) -> None:
            while not server.requests:  # noqa: ASYNC110 - the request arrives at the fake model server
                await asyncio.sleep(0.01)
            os.write(terminal, b"the pool shrank in the deploy, password=hunter2hunter2\n")

        code, shown = await on_a_terminal(
            "--config", config, "investigate", "order-service 5xx?", "--interactive",
            cwd=tmp_path, env=env, term="dumb", stdin_too=True, stderr_too=True,
            answers={b"follow-up question": b"\n"}, alongside=type_while_the_model_thinks,
        )  # fmt: skip
    assert code == 0, shown
    guided = [m["content"] for m in server.bodies[1]["messages"] if m["role"] == "user"][-1]
    assert guided.startswith("Guidance from "), guided
    assert " (terminal) at " in guided
    assert guided.endswith(": the pool shrank in the deploy, password=[REDACTED:password]")
    assert "✍ guidance from " in shown
