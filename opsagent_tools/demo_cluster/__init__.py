"""The demo incident's cluster, served as a Kubernetes API on 127.0.0.1: product code, because `opsagent demo` ships
in the wheel and lets a person try the Kubernetes tools without a cluster.

`incident` builds the cluster (objects and container logs) and keeps it as one JSON file; `server` serves that file
behind a fresh token and writes the kubeconfig that reaches it; `api` answers in the REST API's documented shapes
(List objects, Status errors) and is also the core of the tests' fake (testkit/fakes/kube_api.py).
"""

from opsagent_tools.demo_cluster.api import METRICS_PREFIX, ClusterApi, LogKey, LogLines, resolve, status
from opsagent_tools.demo_cluster.incident import RECORDING, DemoCluster, read_cluster, write_cluster
from opsagent_tools.demo_cluster.server import KUBECONFIG, ServedCluster

__all__ = [
    "KUBECONFIG",
    "METRICS_PREFIX",
    "RECORDING",
    "ClusterApi",
    "DemoCluster",
    "LogKey",
    "LogLines",
    "ServedCluster",
    "read_cluster",
    "resolve",
    "status",
    "write_cluster",
]
