"""Configuration that does not surprise, as a person meets it: `--config` on either side of the command, errors
that name the file (or variable), key and value, the environment winning over the file, an offline demo."""

from __future__ import annotations

from datetime import UTC, datetime

from opsagent_process import environment, opsagent

from bot.cli.demo import OFFLINE_BANNER
from samples.demo_config import write_demo_config
from testkit.fakes.model_server import FakeModelServer, Reply, closed_port_url, openai_completion, openai_tool_call


async def test_config_works_before_and_after_the_command(tmp_path):
    config = write_demo_config(tmp_path, datetime.now(UTC))
    before = await opsagent("--config", config, "check", cwd=tmp_path)
    after = await opsagent("check", "--config", config, cwd=tmp_path)
    nested = await opsagent("tools", "list", "--config", config, cwd=tmp_path)
    assert before.code == after.code == nested.code == 0, (before, after, nested)
    assert "✓ metrics: reachable; 3 services: gateway, order-service, payment-service" in before.out
    assert before.out == after.out
    assert "query_metrics" in nested.out


async def test_a_typo_in_the_file_names_the_file_the_key_and_the_nearest_key(tmp_path):
    config = tmp_path / "opsagent.toml"
    config.write_text('[tools.metrics]\nurll = "http://prometheus:9090"\n\n[policy]\nmode = "yolo"\n')
    ran = await opsagent("check", cwd=tmp_path)
    assert ran.code == 2
    assert ran.err.splitlines() == [
        "opsagent: opsagent.toml: [policy] mode = \"yolo\": should be 'read_only', 'dry_run', 'allowlist' or 'full'",
        "opsagent: opsagent.toml: [tools.metrics] unknown key `urll` (did you mean `url`?)",
    ]
    assert "pydantic" not in ran.err


async def test_an_unknown_section_is_named_as_a_section(tmp_path):
    (tmp_path / "ops.toml").write_text('[tool.metrics]\nurl = "http://prometheus:9090"\n')
    ran = await opsagent("tools", "list", "--config", "ops.toml", cwd=tmp_path)
    assert ran.code == 2
    assert ran.err == "opsagent: ops.toml: unknown section [tool] (did you mean [tools]?)\n"


async def test_a_typo_in_an_environment_override_is_reported_as_the_environment(tmp_path):
    config = write_demo_config(tmp_path, datetime.now(UTC))
    env = environment(OPSAGENT_TOOLS__METRICS__URLL="http://prometheus:9090")
    ran = await opsagent("--config", config, "check", cwd=tmp_path, env=env)
    assert ran.code == 2
    assert ran.err == (
        "opsagent: environment variable OPSAGENT_TOOLS__METRICS__URLL: [tools.metrics] unknown key `urll` "
        "(did you mean `url`: OPSAGENT_TOOLS__METRICS__URL?)\n"
    )


async def test_a_misspelled_variable_is_an_error_naming_the_nearest_one(tmp_path):
    """`OPSAGENT_POLCY__MODE=full` set nothing; the person believes side effects are on. Said, not ignored."""
    config = write_demo_config(tmp_path, datetime.now(UTC))
    ran = await opsagent("--config", config, "check", cwd=tmp_path, env=environment(OPSAGENT_POLCY__MODE="full"))
    assert ran.code == 2
    assert ran.err == (
        "opsagent: environment variable OPSAGENT_POLCY__MODE: no setting or secret has this name "
        "(did you mean OPSAGENT_POLICY__MODE?)\n"
    )


async def test_secrets_read_by_name_are_not_taken_for_misspelled_settings(tmp_path):
    config = write_demo_config(tmp_path, datetime.now(UTC))
    secrets = {
        "OPSAGENT_ALERTMANAGER_TOKEN": "a" * 32,
        "OPSAGENT_VIEWER_SECRET": "v" * 32,
        "OPSAGENT_ACTION_SECRET": "s" * 32,
        "OPSAGENT_LLM_API_KEY": "sk-x",
        "OPSAGENT_POLICY__MODE": "dry_run",
    }
    ran = await opsagent("--config", config, "check", cwd=tmp_path, env=environment(**secrets))
    assert ran.code == 0, ran
    assert "✓ policy: side effects dry_run" in ran.out


async def test_invalid_toml_names_the_file(tmp_path):
    (tmp_path / "opsagent.toml").write_text("[llm\nmodel = 1\n")
    ran = await opsagent("check", cwd=tmp_path)
    assert ran.code == 2
    assert ran.err.startswith("opsagent: opsagent.toml: not valid TOML: ")


async def test_the_model_variable_wins_over_the_files_model(tmp_path):
    async with FakeModelServer() as server:
        probe_call = openai_tool_call("c1", "report_ready", {"ready": True})
        server.script(Reply(openai_completion(None, tool_calls=[probe_call], model="qwen2.5:14b")))
        (tmp_path / "opsagent.toml").write_text(f'[llm]\nmodel = "gpt-4o-mini"\nbase_url = "{closed_port_url()}/v1"\n')
        env = environment(OPSAGENT_LLM_MODEL="qwen2.5:14b", OPSAGENT_LLM_BASE_URL=f"{server.url}/v1")
        ran = await opsagent("check", cwd=tmp_path, env=env)
    assert ran.code == 0, ran
    assert ran.out.startswith(f"✓ model: qwen2.5:14b at {server.url}/v1/chat/completions answered in ")
    assert server.bodies[0]["model"] == "qwen2.5:14b"


async def test_the_demo_is_offline_whatever_the_local_configuration_says(tmp_path):
    (tmp_path / "opsagent.toml").write_text(f'[llm]\nmodel = "gpt-4o-mini"\nbase_url = "{closed_port_url()}/v1"\n')
    ran = await opsagent("demo", cwd=tmp_path, env=environment(OPENAI_API_KEY="sk-not-used"))
    assert ran.code == 0, ran
    assert ran.out.startswith(OFFLINE_BANNER + "\n")
    assert "■ finished" in ran.out
    (tmp_path / "opsagent.toml").write_text("[tools.metrics]\nurll = 1\n")  # not even read
    broken = await opsagent("demo", cwd=tmp_path)
    assert broken.code == 0, broken


async def test_the_demo_uses_the_configured_model_only_when_asked(tmp_path):
    async with FakeModelServer() as server:
        answer = {"answer": "**Root cause**: v2.14.0 cut the pool (steps 1-2)."}
        server.script(Reply(openai_completion(None, tool_calls=[openai_tool_call("c1", "finish", answer)])))
        (tmp_path / "opsagent.toml").write_text(f'[llm]\nmodel = "fake-gpt"\nbase_url = "{server.url}/v1"\n')
        ran = await opsagent("demo", "--model-from-config", cwd=tmp_path)
    assert ran.code == 0, ran
    assert ran.out.startswith("Model: fake-gpt\n")
    assert "\n  v2.14.0 cut the pool.\n" in ran.out, "the answer's summary"
    assert server.bodies[0]["messages"][-1]["content"].startswith("Task: order-service 5xx went from 0.1% to 12%")


async def test_the_demo_asked_for_a_model_without_one_says_how_to_configure_it(tmp_path):
    ran = await opsagent("demo", "--model-from-config", cwd=tmp_path)
    assert ran.code == 2
    assert ran.err.startswith("opsagent: --model-from-config: no model is configured: add an [llm] section")


async def test_version(tmp_path):
    ran = await opsagent("--version", cwd=tmp_path)
    assert ran.code == 0
    assert ran.out == "opsagent 0.1.0\n"
