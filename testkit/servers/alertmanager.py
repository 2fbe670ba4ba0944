"""A real Alertmanager (Debian's `prometheus-alertmanager`) on a free 127.0.0.1 port: gossip off, state in a
temporary directory. Without the binary the test fails naming the package (it does not skip)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from testkit.servers.local_server import free_port
from testkit.servers.prometheus import binary, served


@contextlib.contextmanager
def running_alertmanager(root: Path, config: str) -> Iterator[str]:
    """Serve `config` (alertmanager.yml text) until the block ends; yields the base URL."""
    executable = binary("prometheus-alertmanager", "alertmanager", package="prometheus-alertmanager")
    config_file = root / "alertmanager.yml"
    config_file.write_text(config)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        executable,
        f"--config.file={config_file}",
        f"--storage.path={root / 'alertmanager-data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--cluster.listen-address=",
        "--log.level=debug",
    ]
    with served("alertmanager", command, url, root / "alertmanager.log"):
        yield url
