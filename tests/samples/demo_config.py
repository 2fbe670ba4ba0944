"""A configuration file over the demo incident's generated backends, as an operator would write it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from bot.cli.demo import demo_tools_toml
from opsagent_tools.demo_incident import write_demo_incident


def write_demo_config(root: Path, now: datetime, *, extra: str = "") -> Path:
    """Generate the demo data under `root` and an opsagent.toml that reads it (live clock, no action webhook:
    tests add one in `extra`); returns the file's path."""
    tools = write_demo_incident(root / "data", now, action_url="http://127.0.0.1:9/actions")
    config = root / "opsagent.toml"
    live = tools.model_copy(update={"actions": None, "recorded_at": None})
    config.write_text(
        "# metrics recorded in a file, logs in files, one local git clone\n" + demo_tools_toml(live) + extra
    )
    return config
