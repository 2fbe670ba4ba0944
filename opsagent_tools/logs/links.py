"""Links to a log search for people: Grafana Explore for Loki's LogQL, Kibana Discover for Elasticsearch; files: none.

Each link is the search the tool ran (the same LogQL, the same service, level and query, the same window), so a
responder opens exactly the lines the model read, and more.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import quote

from opsagent_tools.links import LinkSettings, grafana_explore, page_url, public_base
from opsagent_tools.logs.elasticsearch import ElasticsearchSettings, level_terms
from opsagent_tools.logs.loki import LokiSettings, build_logql
from opsagent_tools.logs.search import LEVELS, LogQuery

LABEL = "logs"
RISON_SAFE = "(),:'!*~-_./@$"
"""Rison's own punctuation is left as it is in the URL fragment; everything else is percent-encoded."""
_LUCENE_SPECIAL = re.compile(r'([+\-=&|><!(){}\[\]^"~*?:\\/ ])')


def loki_explore(links: LinkSettings, settings: LokiSettings, q: LogQuery) -> str | None:
    """Grafana Explore with the LogQL the tool sent, over its window; None without Grafana's Loki data source
    (Loki has no UI of its own)."""
    query = {"expr": build_logql(q, settings), "queryType": "range", "editorMode": "code"}
    return grafana_explore(links, "loki", query, q.since, q.until)


def kibana_discover(links: LinkSettings, settings: ElasticsearchSettings, q: LogQuery) -> str | None:
    """Kibana Discover over the window with the search as a Lucene query (the tool's `query` is Lucene already).

    The app and global states are Rison in the fragment, as Kibana writes them:
    `/app/discover#/?_g=(time:(from:'…',to:'…'))&_a=(dataSource:(dataViewId:'…',type:dataView),query:(…))`."""
    base = public_base(links.kibana_url) if links.kibana_url else None
    if base is None:
        return None
    terms = [f"{_field(settings.service_field)}:{_quoted(q.service)}"]
    if q.level is not None and q.level != LEVELS[0]:
        terms.append(f"{_field(settings.level_field)}:({' OR '.join(map(_quoted, level_terms(q.level)))})")
    if q.query:
        terms.append(f"({q.query})")
    time = f"(time:(from:{rison_string(_iso(q.since))},to:{rison_string(_iso(q.until))}))"
    app = [f"query:(language:lucene,query:{rison_string(' AND '.join(terms))})"]
    if links.kibana_data_view:
        app.insert(0, f"dataSource:(dataViewId:{rison_string(links.kibana_data_view)},type:dataView)")
    state = f"/?_g={quote(time, safe=RISON_SAFE)}&_a={quote('(' + ','.join(app) + ')', safe=RISON_SAFE)}"
    return page_url(base, "app/discover", fragment=state)


def rison_string(text: str) -> str:
    """A Rison string: quoted, with ! and ' escaped as !! and !'."""
    return "'" + text.replace("!", "!!").replace("'", "!'") + "'"


def _field(name: str) -> str:
    """A field name for Lucene's query_string: its special characters escaped (dots stay: they are paths)."""
    return _LUCENE_SPECIAL.sub(r"\\\1", name)


def _quoted(text: str) -> str:
    """A Lucene phrase: "text", with backslashes and quotes escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
