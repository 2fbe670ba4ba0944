"""A real PostgreSQL for the run-store tests: `initdb` into a temporary directory, `pg_ctl start` on a free port.

- The binaries come from /usr/lib/postgresql/<version>/bin (Debian's layout, newest version first) or PATH.
  Without them the fixture fails (it does not skip): apt-get install postgresql.
- PostgreSQL refuses to run as root, so when the tests run as root the cluster is made and run by the
  `postgres` user (`runuser -u postgres --`), in a directory it owns (not under pytest's root-only tmp dir).
- The server listens on 127.0.0.1 only, with its socket in the same directory; trust authentication, fsync off.
- Tests take the session's server as a `postgres` argument (the fixture is in tests/conftest.py); `new_database()`
  gives each test its own database. `stop()`, `start()` and `restart()` are for the restart tests.
- `running_postgres()` is the same server outside pytest (the benchmark's); a missing binary raises pytest's `Failed`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest

from testkit.servers.local_server import free_port

SUPERUSER = "postgres"


def postgres_binary(name: str) -> str:
    """The path of a PostgreSQL server binary; without it the test fails, naming the package to install."""
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=_version, reverse=True)
    path = candidates[0] if candidates else shutil.which(name)
    if path is None:
        pytest.fail(
            f"`{name}` was found neither under /usr/lib/postgresql/*/bin nor on PATH: the run-store tests run "
            "a real PostgreSQL. Install it with `apt-get install postgresql` (or run scripts/install-system-deps).",
            pytrace=False,
        )
    return path


def _version(path: str) -> int:
    part = Path(path).parts[-3]
    return int(part) if part.isdigit() else 0


@dataclass
class PostgresServer:
    """One PostgreSQL cluster in `root`, served on 127.0.0.1:`port`."""

    root: Path
    port: int

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def pg_ctl(self, *args: str) -> None:
        """Run `pg_ctl` as the cluster's owner; a failure fails the test with the server log's tail.

        Whatever starts the server passes `-l`, or the server would hold our output pipes open for ever.
        """
        command = [postgres_binary("pg_ctl"), "-D", str(self.data), *args]
        result = subprocess.run(_as_owner(command), capture_output=True, text=True, check=False, timeout=120)
        if result.returncode != 0:
            tail = self.log.read_text()[-3000:] if self.log.exists() else ""
            pytest.fail(f"pg_ctl {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}\n{tail}", pytrace=False)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.pg_ctl("start", "-w", "-t", "60", "-l", str(self.log), "-o", options)

    def stop(self) -> None:
        self.pg_ctl("stop", "-w", "-t", "60", "-m", "fast")

    def restart(self) -> None:
        """Fast restart: the server ends every session (as a crash or a failover would), then comes back."""
        self.pg_ctl("restart", "-w", "-t", "60", "-m", "fast", "-l", str(self.log))

    async def new_database(self) -> str:
        """Create an empty database for one test; its URL."""
        name = f"test_{uuid.uuid4().hex[:12]}"
        connection = await asyncpg.connect(self.url(), timeout=10)
        try:
            await connection.execute(f'CREATE DATABASE "{name}"')
        finally:
            await connection.close()
        return self.url(name)


def _as_owner(command: list[str]) -> list[str]:
    """PostgreSQL will not run as root: as root, run the command as the `postgres` user."""
    return ["runuser", "-u", SUPERUSER, "--", *command] if os.geteuid() == 0 else command


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """initdb a fresh cluster, start it on a free port, wait until it accepts connections; stop and delete it at the end.

    The tests' session fixture and the replica benchmark (bench/replica_bench.py) both start theirs here.
    """
    initdb = postgres_binary("initdb")
    root = Path(tempfile.mkdtemp(prefix="opsagent-postgres-"))
    if os.geteuid() == 0:
        shutil.chown(root, user=SUPERUSER, group=SUPERUSER)
    server = PostgresServer(root=root, port=free_port())
    made = subprocess.run(
        _as_owner([initdb, "-D", str(server.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync"]),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if made.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"initdb failed:\n{made.stdout}\n{made.stderr}", pytrace=False)
    try:
        server.start()
        yield server
    finally:
        subprocess.run(
            _as_owner([postgres_binary("pg_ctl"), "-D", str(server.data), "stop", "-w", "-m", "immediate"]),
            capture_output=True,
            check=False,
            timeout=120,
        )
        shutil.rmtree(root, ignore_errors=True)
