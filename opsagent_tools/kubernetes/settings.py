"""The `[tools.kubernetes]` section: which cluster, how to authenticate, which namespaces may be read, timeouts.

The namespace allowlist is required: a cluster holds other teams' workloads, so reading them all must be said aloud.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
DEFAULT_NAMESPACE = "default"


class KubernetesSettings(BaseModel):
    """The Kubernetes tools' cluster and scope; credentials stay in the kubeconfig or the pod's service account."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    namespaces: tuple[str, ...] = ()
    """The namespaces the tools may read; the first is the default. Required unless `all_namespaces = true`."""
    all_namespaces: bool = False
    """Read every namespace (still never a Secret). Must be explicit: the allowlist is the safe default."""
    in_cluster: bool = False
    """Authenticate as the pod's service account (the token Kubernetes mounts); else use a kubeconfig."""
    kubeconfig: Path | None = None
    """The kubeconfig file; default $KUBECONFIG, then ~/.kube/config."""
    context: str | None = None
    """The kubeconfig context to use; default its current-context."""
    request_timeout_s: float = Field(default=10.0, gt=0)
    """Seconds one request to the API server may take."""
    timeout_s: float = Field(default=30.0, gt=0)
    """Seconds one tool call may take in all (a call makes two or three requests)."""
    list_limit: int = Field(default=500, ge=1, le=5000)
    """Objects read per list request (events, pods); more are reported as left out, not fetched."""
    log_lines: int = Field(default=2000, ge=1, le=50_000)
    """Newest lines of a container log fetched per call (the API's tailLines), grouped before they are shown."""
    log_bytes: int = Field(default=2_000_000, ge=10_000)
    """Bytes of a container log fetched at most per call (the API's limitBytes)."""

    @field_validator("namespaces")
    @classmethod
    def _namespace_names(cls, namespaces: tuple[str, ...]) -> tuple[str, ...]:
        bad = [name for name in namespaces if not _DNS_LABEL.fullmatch(name)]
        if bad:
            raise ValueError(f"not namespace names (lower-case DNS labels): {', '.join(map(repr, bad))}")
        return tuple(dict.fromkeys(namespaces))

    @model_validator(mode="after")
    def _scope_and_credentials(self) -> Self:
        if not self.namespaces and not self.all_namespaces:
            raise ValueError(
                "tools.kubernetes.namespaces is empty: list the namespaces the agent may read, "
                'e.g. namespaces = ["shop", "payments"], or set all_namespaces = true to read them all'
            )
        if self.namespaces and self.all_namespaces:
            raise ValueError("tools.kubernetes: give either namespaces or all_namespaces = true, not both")
        if self.in_cluster and (self.kubeconfig is not None or self.context is not None):
            raise ValueError(
                "tools.kubernetes: in_cluster = true uses the pod's service account; drop kubeconfig/context"
            )
        if self.request_timeout_s > self.timeout_s:
            raise ValueError("tools.kubernetes.request_timeout_s must not exceed timeout_s (a call's whole budget)")
        return self

    @property
    def default_namespace(self) -> str:
        """The namespace a tool reads when the model names none."""
        return self.namespaces[0] if self.namespaces else DEFAULT_NAMESPACE

    def allows(self, namespace: str) -> bool:
        """Whether the tools may read `namespace`."""
        return self.all_namespaces or namespace in self.namespaces

    def scope_text(self) -> str:
        """The allowed namespaces, for tool descriptions and errors."""
        return "any namespace" if self.all_namespaces else ", ".join(self.namespaces)
