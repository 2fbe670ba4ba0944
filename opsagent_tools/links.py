"""Where a person sees an observation for themselves: the `[links]` settings and the one safe way to assemble a URL.

The API URLs the bot uses may be internal or carry passwords, so links are built from public base URLs only:
http(s), no userinfo, every part quoted; a base that is not such a URL gives no link rather than a wrong one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal
from urllib.parse import quote, urlencode, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from kernel import SourceLink

_UNSAFE = re.compile(r'[\s<>|"\\\x00-\x1f\x7f]')
"""What a URL never holds unquoted, and what would break a link's markup (Slack's <url|label>)."""
GRAFANA_PANE = "oa1"
"""The Explore pane's id: Grafana wants three characters of [0-9a-z], not all digits."""


class LinkSettings(BaseModel):
    """`[links]`: the public addresses people open, which may differ from the addresses the bot queries."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prometheus_url: str | None = None
    """Prometheus' public base URL for graph links; default: `[tools.metrics] url` without any user or password."""
    grafana_url: str | None = None
    """Grafana's public base URL: with a data source uid below, metric and Loki links open Grafana Explore."""
    grafana_prometheus_datasource: str | None = None
    """The uid of Grafana's Prometheus data source (Connections → Data sources → the uid in its URL)."""
    grafana_loki_datasource: str | None = None
    """The uid of Grafana's Loki data source; Loki has no UI of its own, so without it Loki searches get no link."""
    grafana_org_id: int | None = Field(default=None, ge=1)
    """Grafana's organisation (`orgId`), for a Grafana with several."""
    kibana_url: str | None = None
    """Kibana's public base URL (with its base path, e.g. https://kibana.example/kibana): Elasticsearch searches open
    in Discover."""
    kibana_data_view: str | None = None
    """The id of the Kibana data view over `[tools.logs.elasticsearch] index`; without it Discover opens the default."""
    git_web_url: str | None = None
    """For local git clones: the repository's web page, `{repo}` standing for its configured name, in GitHub's
    layout (`…/blob/REF/PATH`, `…/compare/A...B`), e.g. https://github.example.com/acme/{repo}, or
    https://gitlab.example.com/acme/{repo}/- for GitLab. Unset: local clones have no links."""

    @field_validator("prometheus_url", "grafana_url", "kibana_url", "git_web_url")
    @classmethod
    def _public_http_url(cls, url: str | None, info: ValidationInfo) -> str | None:
        if url is not None and public_base(url) is None:
            raise ValueError(
                f"{info.field_name} must be an http(s) URL people can open, e.g. https://grafana.example.com"
            )
        return url

    def prometheus_base(self, metrics_url: str) -> str | None:
        """The public Prometheus for graph links: the configured one, else the metrics API's own address."""
        return public_base(self.prometheus_url or metrics_url)

    def grafana(self, kind: Literal["prometheus", "loki"]) -> tuple[str, str] | None:
        """(Grafana's base, the data source uid) for `kind` when both are configured."""
        uid = self.grafana_prometheus_datasource if kind == "prometheus" else self.grafana_loki_datasource
        base = public_base(self.grafana_url) if self.grafana_url else None
        return (base, uid) if base is not None and uid else None


def public_base(url: str | None) -> str | None:
    """`url` as a base for links: http(s) only, user, password, query and fragment dropped, no trailing slash."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if parts.scheme not in ("http", "https") or not host:
        return None
    netloc = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{netloc}{f':{port}' if port else ''}{parts.path.rstrip('/')}"


def page_url(base: str, path: str = "", params: Mapping[str, str] | None = None, fragment: str = "") -> str:
    """A page under `base` (already public): `path` quoted segment by segment, `params` encoded, `fragment` as given
    (the caller quotes it)."""
    url = base.rstrip("/") + ("/" + quote(path.lstrip("/"), safe="/") if path else "")
    if params:
        url += "?" + urlencode(params, quote_via=quote)
    return url + (f"#{fragment}" if fragment else "")


def safe_link(label: str, url: str | None) -> SourceLink | None:
    """A link to a URL from elsewhere (a GitHub API answer, a source's own link), only if it is http(s), names no
    user or password and holds nothing a URL must quote; None otherwise."""
    if not url or _UNSAFE.search(url.strip()):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return None
    return SourceLink(label, url.strip())


def grafana_explore(
    links: LinkSettings, kind: Literal["prometheus", "loki"], query: Mapping[str, Any], start: datetime, end: datetime
) -> str | None:
    """Grafana Explore with one query (`{"expr": …}` and its options) over [start, end], or None without Grafana.

    The form current Grafana writes and reads (schemaVersion 1): `/explore?schemaVersion=1&panes={"<id>":
    {"datasource": uid, "queries": [{"refId": "A", "datasource": {"type", "uid"}, …}], "range": {"from", "to"}}}`,
    times as epoch milliseconds in strings. (The older `left=` form is still read, but migrated.)"""
    grafana = links.grafana(kind)
    if grafana is None:
        return None
    base, uid = grafana
    pane = {
        "datasource": uid,
        "queries": [{"refId": "A", "datasource": {"type": kind, "uid": uid}, **query}],
        "range": {"from": str(_epoch_ms(start)), "to": str(_epoch_ms(end))},
    }
    params = {"schemaVersion": "1", "panes": json.dumps({GRAFANA_PANE: pane}, separators=(",", ":"))}
    if links.grafana_org_id is not None:
        params["orgId"] = str(links.grafana_org_id)
    return page_url(base, "explore", params)


def _epoch_ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)
