"""`opsagent check` on the API: off says nothing; on, it names the clients and where their runs post, or fails
saying what to set (as `serve` would refuse to start)."""

from __future__ import annotations

from opsagent_process import environment, opsagent


def api_line(out: str) -> str:
    return next(line for line in out.splitlines() if " api: " in f" {line}")


async def test_check_fails_an_api_without_tokens_and_says_what_to_set(tmp_path):
    (tmp_path / "opsagent.toml").write_text("[api]\nenabled = true\n")
    ran = await opsagent("check", cwd=tmp_path, env=environment())
    assert ran.code == 1, ran
    assert api_line(ran.out) == (
        "✗ api: [api] is enabled but OPSAGENT_API_TOKENS holds no tokens: set it to `name:token` pairs, e.g. "
        "`OPSAGENT_API_TOKENS=claude:$(openssl rand -hex 32)`, or set [api] enabled = false"
    )


async def test_check_names_a_malformed_pair_without_showing_any_token(tmp_path):
    (tmp_path / "opsagent.toml").write_text('[api]\nenabled = true\ntokens_env = "AGENT_TOKENS"\n')
    ran = await opsagent("check", cwd=tmp_path, env=environment(AGENT_TOKENS="claude:s3cr3t-short"))
    assert ran.code == 1
    assert api_line(ran.out) == (
        "✗ api: AGENT_TOKENS, pair 1 (claude): the token must be 16+ characters without spaces (e.g. `openssl rand -hex "
        "32`)"
    )
    assert "s3cr3t" not in ran.out + ran.err


async def test_check_reports_the_clients_and_where_their_runs_post(tmp_path):
    (tmp_path / "opsagent.toml").write_text('[api]\nenabled = true\napproval_channel = "C0APPROVALS"\n')
    tokens = "claude:0123456789abcdef0123,ci:fedcba9876543210fedc"
    ran = await opsagent("check", cwd=tmp_path, env=environment(OPSAGENT_API_TOKENS=tokens))
    assert api_line(ran.out) == (
        "✓ api: /v1 and /mcp for 2 clients (claude, ci); runs posted where each request says, else in no channel; "
        "approvals of runs in no channel go to C0APPROVALS"
    )


async def test_check_says_nothing_of_an_api_that_is_off(tmp_path):
    ran = await opsagent("check", cwd=tmp_path, env=environment())
    assert all(" api: " not in f" {line}" for line in ran.out.splitlines())
