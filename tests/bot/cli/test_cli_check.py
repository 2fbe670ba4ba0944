"""`opsagent check` as a person runs it: the model is really asked (a tiny tool-call probe), and a model that is
unreachable, refuses the key or has none fails the check."""

from __future__ import annotations

import re

from opsagent_process import environment, opsagent

from testkit.fakes.model_server import (
    FakeModelServer,
    Reply,
    anthropic_message,
    anthropic_tool_use,
    closed_port_url,
    openai_completion,
    openai_error,
    openai_tool_call,
)

PROBE_CALL = openai_completion(None, tool_calls=[openai_tool_call("c1", "report_ready", {"ready": True})])
REFUSED = Reply(openai_error("Incorrect API key provided: sk-wrong.", code="invalid_api_key"), status=401)


def model_line(out: str) -> str:
    return next(line for line in out.splitlines() if "model:" in line)


async def test_a_working_model_reports_its_name_tool_calling_and_latency(tmp_path):
    async with FakeModelServer() as server:
        server.script(Reply(PROBE_CALL))
        env = environment(
            OPSAGENT_LLM_BASE_URL=f"{server.url}/v1", OPSAGENT_LLM_MODEL="fake-gpt", OPENAI_API_KEY="sk-t"
        )
        ran = await opsagent("check", cwd=tmp_path, env=env)
    assert ran.code == 0, ran
    assert re.fullmatch(
        rf"✓ model: fake-gpt at {server.url}/v1/chat/completions answered in \d+ ms; native tool calling works",
        model_line(ran.out),
    )
    probe = server.bodies[0]
    assert probe["model"] == "fake-gpt"
    assert [tool["function"]["name"] for tool in probe["tools"]] == ["report_ready"]
    assert server.requests[0].headers["authorization"] == "Bearer sk-t"


async def test_a_model_that_answers_in_text_passes_with_advice(tmp_path):
    async with FakeModelServer() as server:
        server.script(Reply(openai_completion("I am ready.")))
        env = environment(OPSAGENT_LLM_BASE_URL=f"{server.url}/v1", OPSAGENT_LLM_MODEL="small-local")
        ran = await opsagent("check", cwd=tmp_path, env=env)
    assert ran.code == 0, ran
    line = model_line(ran.out)
    assert "but in text, not with a native tool call: if runs fail to parse, set [llm] native_tools = false" in line
    assert line.endswith("; no API key was sent (fine for a local server)")


async def test_anthropic_is_probed_over_its_own_wire(tmp_path):
    async with FakeModelServer() as server:
        server.script(Reply(anthropic_message(anthropic_tool_use("t1", "report_ready", {"ready": True}))))
        config = tmp_path / "opsagent.toml"
        config.write_text(f'[llm]\nprovider = "anthropic"\nmodel = "claude-x"\nbase_url = "{server.url}"\n')
        ran = await opsagent("check", cwd=tmp_path, env=environment(ANTHROPIC_API_KEY="sk-ant"))
    assert ran.code == 0, ran
    assert model_line(ran.out).endswith("native tool calling works")
    assert server.requests[0].path == "/v1/messages"
    assert server.requests[0].headers["x-api-key"] == "sk-ant"


async def test_an_unreachable_model_fails_the_check(tmp_path):
    url = closed_port_url()
    env = environment(OPSAGENT_LLM_BASE_URL=f"{url}/v1", OPSAGENT_LLM_MODEL="qwen2.5")
    ran = await opsagent("check", cwd=tmp_path, env=env)
    assert ran.code == 1
    assert model_line(ran.out).startswith(f"✗ model: qwen2.5 at {url}/v1/chat/completions: connection: ")
    assert "Traceback" not in ran.err


async def test_a_refused_key_fails_and_names_the_variable_it_came_from(tmp_path):
    async with FakeModelServer() as server:
        server.script(REFUSED, REFUSED)
        config = tmp_path / "opsagent.toml"
        config.write_text(f'[llm]\nmodel = "gpt-4o"\nbase_url = "{server.url}/v1"\napi_key_env = "TEAM_OPENAI_KEY"\n')
        named = await opsagent("check", cwd=tmp_path, env=environment(TEAM_OPENAI_KEY="sk-wrong"))
        config.unlink()
        env = environment(OPSAGENT_LLM_BASE_URL=f"{server.url}/v1", OPENAI_API_KEY="sk-wrong")
        default = await opsagent("check", cwd=tmp_path, env=env)
    assert named.code == 1
    assert "✗ model: gpt-4o at" in model_line(named.out)
    assert "auth (HTTP 401): HTTP 401 from" in model_line(named.out)
    assert model_line(named.out).endswith(
        "The key in TEAM_OPENAI_KEY was refused: check that variable (a typo, a revoked key, another endpoint's key)."
    )
    assert default.code == 1
    assert "The key in OPENAI_API_KEY was refused" in model_line(default.out)


async def test_a_hosted_model_without_a_key_fails_without_a_request(tmp_path):
    ran = await opsagent("check", cwd=tmp_path, env=environment(OPSAGENT_LLM_MODEL="gpt-4o-mini"))
    assert ran.code == 1
    assert model_line(ran.out) == (
        "✗ model: gpt-4o-mini at https://api.openai.com/v1/chat/completions: no API key is set: "
        "export OPSAGENT_LLM_API_KEY or OPENAI_API_KEY"
    )


async def test_an_api_key_env_naming_an_unset_variable_is_an_error_at_start_up(tmp_path):
    (tmp_path / "opsagent.toml").write_text('[llm]\nmodel = "gpt-4o"\napi_key_env = "TEAM_OPENAI_KEY"\n')
    check = await opsagent("check", cwd=tmp_path)
    investigate = await opsagent("investigate", "why 5xx?", cwd=tmp_path)
    expected = "[llm] api_key_env names TEAM_OPENAI_KEY, which is not set: export TEAM_OPENAI_KEY=<your key>"
    assert check.code == 1
    assert model_line(check.out).startswith(f"✗ model: {expected}")
    assert investigate.code == 2
    assert investigate.err.startswith(f"opsagent: {expected}")
    assert "Traceback" not in investigate.err


async def test_no_model_is_said_plainly_and_is_not_a_failure(tmp_path):
    ran = await opsagent("check", cwd=tmp_path)
    assert ran.code == 0
    assert ran.out.splitlines()[0] == "· model: none configured (the demo still runs offline)"
