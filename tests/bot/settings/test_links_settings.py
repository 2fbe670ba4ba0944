"""The `[links]` section: read from the file and the environment like every section, its mistakes named, and handed
by the one toolset builder to every tool, so a configured Grafana is where a metric step links."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agent import opened_toolset
from bot.settings import ConfigError, load_settings
from opsagent_tools.links import LinkSettings
from testkit.servers.prometheus import PrometheusServer
from worlds.dispatch import dispatch_call


def test_the_links_section_is_read_from_the_file_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "opsagent.toml"
    config.write_text('[links]\ngrafana_url = "https://grafana.example.com"\ngrafana_loki_datasource = "loki-1"\n')
    monkeypatch.setenv("OPSAGENT_LINKS__KIBANA_URL", "https://kibana.example.com")
    settings = load_settings(config, environ={})
    assert settings.links == LinkSettings(
        grafana_url="https://grafana.example.com",
        grafana_loki_datasource="loki-1",
        kibana_url="https://kibana.example.com",
    )
    config.write_text('[links]\ngrafana_uri = "https://g"\n')
    with pytest.raises(ConfigError, match=r"\[links\] unknown key `grafana_uri` \(did you mean `grafana_url`\?\)"):
        load_settings(config, environ={})
    config.write_text('[links]\ngrafana_url = "grafana.example.com"\n')
    with pytest.raises(ConfigError, match=r"grafana_url must be an http\(s\) URL people can open, e.g. https://"):
        load_settings(config, environ={})


async def test_the_toolset_links_each_step_where_the_section_says(tmp_path: Path, prometheus: PrometheusServer) -> None:
    config = tmp_path / "opsagent.toml"
    config.write_text(
        f'[tools.metrics]\nurl = "{prometheus.url}"\n'
        '[links]\ngrafana_url = "https://grafana.example.com"\ngrafana_prometheus_datasource = "prom-1"\n'
    )
    settings = load_settings(config, environ={})
    async with opened_toolset(settings, environ={}, now=prometheus.now) as toolset:
        result = await dispatch_call(toolset.tools, "query_metrics", service="order-service")
    assert [link.url.split("?")[0] for link in result.links] == ["https://grafana.example.com/explore"]
