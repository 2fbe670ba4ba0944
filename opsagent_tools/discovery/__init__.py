"""A map of the environment: `discover(kind, filter?)` lists what exists, so the model does not guess names.

Each backend family supplies a source with its own kinds (Prometheus metrics, labels and series; Loki labels;
Elasticsearch indices and fields; Kubernetes namespaces and workloads); the tool knows none of them, and answers
from a per-process cache.
"""

from opsagent_tools.discovery.cache import DiscoveryCache
from opsagent_tools.discovery.family import DiscoveryFamily
from opsagent_tools.discovery.settings import DiscoverySettings
from opsagent_tools.discovery.tools import DiscoverySource, Kind, discover_tool

__all__ = ["DiscoveryCache", "DiscoveryFamily", "DiscoverySettings", "DiscoverySource", "Kind", "discover_tool"]
