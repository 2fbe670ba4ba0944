"""A configuration file over the demo incident's generated backends, as an operator would write it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from opsagent_tools.demo_incident import DEMO_ALIASES, write_demo_incident


def write_demo_config(root: Path, now: datetime, *, extra: str = "") -> Path:
    """Generate the demo data under `root` and an opsagent.toml that reads it; returns the file's path."""
    data = root / "data"
    write_demo_incident(data, now, action_url="http://127.0.0.1:9/actions")
    aliases = "\n".join(
        f"[tools.metrics.aliases.{name}]\npromql = '{alias.promql}'\nunit = \"{alias.unit}\"\n"
        f'description = "{alias.description}"\n'
        for name, alias in DEMO_ALIASES.items()
    )
    config = root / "opsagent.toml"
    config.write_text(
        f"""# metrics recorded in a file, logs in files, one local git clone
[tools.metrics]
url = "file://{data / "metrics.jsonl"}"
{aliases}
[tools.logs]
backend = "files"

[tools.logs.files]
directory = "{data / "logs"}"

[tools.repos.repositories]
order-service = "{data / "repos" / "order-service"}"
{extra}"""
    )
    return config
