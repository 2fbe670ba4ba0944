"""The `[tools.changes]` section: which of the configured backends feed `recent_changes`, and how services are matched.

Every source reads a backend another section configures (Kubernetes, repositories, Prometheus); here each can be
turned off, and the names that tie a service to a deployment or a version metric are set.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
DEFAULT_DEPLOYMENT_LABELS = ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app")
NO_SOURCES = (
    "tools.changes is configured, but none of its sources is: it reads [tools.kubernetes], [tools.repos] and "
    "[tools.metrics] (and may turn each off); configure one of them, or drop [tools.changes]"
)


class ChangesSettings(BaseModel):
    """The change timeline's sources and limits; the section's presence adds the `recent_changes` tool."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(default=15.0, gt=0)
    """Seconds each source may take (they are read at once); the tool's own timeout is this plus 5 s."""
    max_entries: int = Field(default=40, ge=1, le=500)
    """Changes shown, newest first; the rest are counted."""
    kubernetes: bool = True
    """Deployment rollouts (ReplicaSet revisions), when [tools.kubernetes] is configured."""
    deployment_labels: tuple[str, ...] = DEFAULT_DEPLOYMENT_LABELS
    """A deployment belongs to a service named by its name or by the value of one of these labels."""
    repos: bool = True
    """Tags and merges of the repositories in [tools.repos] (local clones and GitHub alike)."""
    github: bool = True
    """Deployments and releases of the GitHub repositories in [tools.repos]."""
    github_environments: tuple[str, ...] = ()
    """Only GitHub deployments to these environments (e.g. ["production"]); empty: every environment."""
    build_info_metric: str = ".+_build_info"
    """The version metric's name, or a regular expression of names, in [tools.metrics]' Prometheus; "" for none."""
    version_label: str = "version"
    """The build-info label whose value is the version."""
    alerts: bool = True
    """Alerts that fired in the window, from Prometheus' ALERTS{alertstate="firing"} series."""

    @field_validator("build_info_metric")
    @classmethod
    def _a_regular_expression(cls, metric: str) -> str:
        try:
            re.compile(metric)
        except re.error as exc:
            raise ValueError(f"not a regular expression ({exc}): give a metric name such as app_build_info") from None
        if '"' in metric or "\\" in metric:
            raise ValueError('a metric name or pattern without quotes or backslashes, e.g. ".+_build_info"')
        return metric

    @field_validator("version_label")
    @classmethod
    def _a_label_name(cls, label: str) -> str:
        if not _LABEL_NAME.fullmatch(label):
            raise ValueError(f"{label!r} is not a Prometheus label name (letters, digits and _)")
        return label
