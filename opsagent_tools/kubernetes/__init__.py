"""Kubernetes, read-only: pods of a workload, describe, events, container logs, rollout history, resource usage.

Namespaces are allowlisted, Secrets can never be read, and every request goes through one client (`api.py`).
"""

from opsagent_tools.kubernetes.api import KubeApi
from opsagent_tools.kubernetes.family import KubernetesFamily
from opsagent_tools.kubernetes.settings import KubernetesSettings
from opsagent_tools.kubernetes.tools import kubernetes_tools

__all__ = ["KubeApi", "KubernetesFamily", "KubernetesSettings", "kubernetes_tools"]
