"""`[tools.mcp.servers.<name>]` in opsagent.toml: what is accepted, and errors that say what to fix."""

from __future__ import annotations

import pytest

from bot.settings import load_settings


def settings_from(tmp_path, text: str):
    config = tmp_path / "opsagent.toml"
    config.write_text(text)
    return load_settings(config, environ={})


def test_a_stdio_server_and_an_http_server_load(tmp_path):
    settings = settings_from(
        tmp_path,
        """
[tools.mcp.servers.grafana]
command = "grafana-mcp"
args = ["--read-only"]
env = ["GRAFANA_TOKEN"]
read_only = ["search_dashboards"]
timeout_s = 20

[tools.mcp.servers.sentry]
url = "https://mcp.sentry.example/mcp"
headers_env = { Authorization = "SENTRY_MCP_AUTH" }
""",
    )
    servers = settings.tools.mcp.servers
    assert servers["grafana"].env == ["GRAFANA_TOKEN"]
    assert servers["grafana"].read_only == ["search_dashboards"]
    assert servers["sentry"].headers_env == {"Authorization": "SENTRY_MCP_AUTH"}


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ('command = "x"\nurl = "https://x/mcp"', "give exactly one of 'command' (a stdio server) or 'url'"),
        ("timeout_s = 5", "give exactly one of 'command' (a stdio server) or 'url'"),
        ('command = "x"\nenv = ["TOKEN=abc"]', "env lists names of environment variables, not values: 'TOKEN=abc'"),
        ('url = "https://x/mcp"\nheaders_env = { Authorization = "Bearer abc" }', "headers_env.Authorization names"),
        ('url = "ftp://x"', "url must be an http:// or https:// endpoint"),
        ('command = "x"\nheaders_env = { A = "B" }', "a stdio server gets its secrets through 'env'"),
        ('command = "x"\nread_only = "all"', "read_only"),
        (
            'command = "x"\nmax_tools = 20',
            "max_tools is gone: however many tools a server has, a run's request lists them on one line of load_tools' index",
        ),
    ],
)
def test_a_wrong_server_section_says_what_to_fix(tmp_path, section, message):
    with pytest.raises(ValueError, match=r"tools\.mcp\.servers\.x") as error:
        settings_from(tmp_path, f"[tools.mcp.servers.x]\n{section}\n")
    assert message in str(error.value)


@pytest.mark.parametrize("name", ["a__b", "-x", "has space", "x" * 25])
def test_a_server_name_that_would_garble_tool_names_is_refused(tmp_path, name):
    with pytest.raises(ValueError, match="use up to 24 letters and digits joined by single '-' or '_'"):
        settings_from(tmp_path, f'[tools.mcp.servers."{name}"]\ncommand = "x"\n')
