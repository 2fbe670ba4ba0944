"""The Kubernetes tools as a run calls them: settings for a fake API server, and calls through the kernel's dispatch.

Dispatch is the real one (validation, timeout, redaction), so what a test reads is what the model would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernel import DispatchResult, Tool
from opsagent_tools.kubernetes import KubernetesSettings, kubernetes_tools
from samples.kube_objects import NOW
from testkit.fakes.kube_api import FakeKubeApi
from worlds.dispatch import dispatch_call


def settings_for(server: FakeKubeApi, directory: Path, **overrides: Any) -> KubernetesSettings:
    """Settings that reach `server` through a kubeconfig file, allowing shop and default unless told otherwise."""
    fields: dict[str, Any] = {"namespaces": ("shop", "default")} | overrides
    if "kubeconfig" not in fields and not fields.get("in_cluster"):
        fields["kubeconfig"] = server.kubeconfig(directory)
    return KubernetesSettings(**fields)


def tools_for(server: FakeKubeApi, directory: Path, **overrides: Any) -> list[Tool]:
    return kubernetes_tools(settings_for(server, directory, **overrides), now=lambda: NOW)


async def call(tools: list[Tool], tool: str, /, **args: Any) -> DispatchResult:
    """One call through the Dispatcher, as a run makes it."""
    return await dispatch_call(tools, tool, **args)


async def text_of(tools: list[Tool], tool: str, /, **args: Any) -> str:
    """A call's output, which must not be an error."""
    outcome = await call(tools, tool, **args)
    assert outcome.error is None, outcome.text
    return outcome.text


async def error_of(tools: list[Tool], tool: str, /, **args: Any) -> str:
    """A call's error message, which must be one."""
    outcome = await call(tools, tool, **args)
    assert outcome.error is not None, outcome.text
    return outcome.text
