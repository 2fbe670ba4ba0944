"""`opsagent init` as a newcomer runs it: flags or a few questions give a commented opsagent.toml that loads, and
`check` runs on it at once."""

from __future__ import annotations

from datetime import UTC, datetime

from opsagent_process import environment, opsagent

from bot.settings import load_settings
from opsagent_tools.demo_incident import write_demo_incident
from testkit.fakes.model_server import FakeModelServer, Reply, openai_completion, openai_tool_call

PROBE_CALL = openai_completion(None, tool_calls=[openai_tool_call("c1", "report_ready", {"ready": True})])


async def test_init_from_flags_writes_a_commented_file_and_checks_it(tmp_path):
    data = tmp_path / "data"
    write_demo_incident(data, datetime.now(UTC), action_url="http://127.0.0.1:9/a")
    async with FakeModelServer() as server:
        server.script(Reply(PROBE_CALL))
        ran = await opsagent(
            "init",
            "--prometheus", f"file://{data / 'metrics.jsonl'}",
            "--logs", f"files={data / 'logs'}",
            "--repo", f"order-service={data / 'repos' / 'order-service'}",
            "--model", "fake-gpt", "--base-url", f"{server.url}/v1",
            "--approver", "U0ALICE",
            cwd=tmp_path,
        )  # fmt: skip
    assert ran.code == 0, ran
    written = (tmp_path / "opsagent.toml").read_text()
    assert written.startswith("# OpsAgent configuration, written by `opsagent init` on ")
    assert "# [tools.actions.webhook]" in written, "what was not asked stays as a commented example"
    settings = load_settings(tmp_path / "opsagent.toml")
    assert settings.llm is not None
    assert (settings.llm.model, settings.llm.base_url) == ("fake-gpt", f"{server.url}/v1")
    assert settings.tools.logs is not None
    assert settings.tools.logs.backend == "files"
    assert settings.slack.approvers == ["U0ALICE"]
    lines = ran.out.splitlines()
    assert lines[0] == "wrote opsagent.toml: metrics, logs (files), 1 repository, a model, 1 approver(s)"
    assert any(line.startswith("✓ model: fake-gpt at ") for line in lines)
    assert "✓ metrics: reachable; 3 services: gateway, order-service, payment-service" in lines
    assert "✓ repo order-service: readable at HEAD (3 entries at the root)" in lines


async def test_init_asks_when_no_flag_is_given(tmp_path):
    answers = (
        "http://127.0.0.1:9\nloki=http://loki:3100\norders=/srv/orders, payments=github:acme/payments\n\n\nU1, U2\n"
    )
    ran = await opsagent("init", "--output", "ops.toml", cwd=tmp_path, stdin=answers.encode())
    assert ran.code == 1, "the check runs, and Prometheus at port 9 is not there"
    assert "Prometheus URL (empty: none): " in ran.out
    assert "wrote ops.toml: metrics, logs (loki), 2 repositories, 2 approver(s)" in ran.out
    assert "✗ metrics: cannot reach Prometheus at http://127.0.0.1:9" in ran.out
    settings = load_settings(tmp_path / "ops.toml")
    assert settings.llm is None, "no model answered: it comes from the environment"
    assert settings.tools.logs is not None
    assert settings.tools.logs.loki is not None
    assert settings.tools.logs.loki.url == "http://loki:3100"
    assert settings.tools.repos is not None
    assert sorted(settings.tools.repos.repositories) == ["orders", "payments"]
    assert settings.tools.repos.repositories["payments"].github == "acme/payments"
    assert settings.slack.approvers == ["U1", "U2"]


async def test_init_never_replaces_a_file_unless_forced(tmp_path):
    (tmp_path / "opsagent.toml").write_text("# mine\n")
    ran = await opsagent("init", "--model", "m", cwd=tmp_path, env=environment())
    assert ran.code == 2
    assert ran.err == "opsagent: opsagent.toml exists: pass --force to replace it, or --output another file\n"
    assert (tmp_path / "opsagent.toml").read_text() == "# mine\n"


async def test_init_asks_again_after_a_malformed_answer(tmp_path):
    """A malformed answer is said and asked again, never dropped from the file."""
    answers = (
        "prometheus:9090\nhttp://127.0.0.1:9\n"  # no scheme, then a URL
        "loki\nloki=http://loki:3100\n"  # no URL, then one
        "orders\norders=/srv/orders\n"  # no path, then one
        "\n\n"
        "@alice\nU1\n"  # a handle, then a user id
    )
    ran = await opsagent("init", "--output", "ops.toml", cwd=tmp_path, stdin=answers.encode())
    assert ran.code == 1, "the check runs, and Prometheus at port 9 is not there"
    assert ran.out.count("Prometheus URL (empty: none): ") == 2
    lines = ran.out.splitlines()
    assert (
        "Prometheus URL (empty: none): write a URL such as http://prometheus:9090 (or file:///path/series.jsonl for "
        "a recording); try again"
    ) in lines
    assert any(line.endswith("write loki=URL, elasticsearch=URL or files=DIR, e.g. loki=http://loki:3100; try again")
               for line in lines)  # fmt: skip
    assert any(line.endswith("'orders': write NAME=PATH (or NAME=github:owner/name); try again") for line in lines)
    assert any(line.endswith("'@alice' is not a Slack user id: write ids such as U024BE7LH (a profile's ⋮ menu, "
                             "Copy member ID); try again") for line in lines)  # fmt: skip
    assert "wrote ops.toml: metrics, logs (loki), 1 repository, 1 approver(s)" in ran.out
    settings = load_settings(tmp_path / "ops.toml")
    assert settings.tools.metrics is not None
    assert settings.tools.metrics.url == "http://127.0.0.1:9"
    assert settings.tools.logs is not None
    assert settings.tools.logs.loki is not None
    assert settings.slack.approvers == ["U1"]


async def test_init_writes_nothing_when_the_input_ends_after_a_malformed_answer(tmp_path):
    ran = await opsagent("init", cwd=tmp_path, stdin=b"http://127.0.0.1:9\nloki\n")
    assert ran.code == 2
    assert ran.err == (
        "opsagent: Logs: loki=URL, elasticsearch=URL or files=DIR: write loki=URL, elasticsearch=URL or files=DIR, "
        "e.g. loki=http://loki:3100; the input ended, so nothing was written\n"
    )
    assert not (tmp_path / "opsagent.toml").exists()


async def test_a_malformed_flag_is_named_by_the_rule_its_question_uses(tmp_path):
    ran = await opsagent("init", "--model", "m", "--approver", "alice", cwd=tmp_path)
    assert ran.code == 2
    assert ran.err == (
        "opsagent: --approver alice: 'alice' is not a Slack user id: write ids such as U024BE7LH (a profile's ⋮ "
        "menu, Copy member ID)\n"
    )
    assert not (tmp_path / "opsagent.toml").exists()
