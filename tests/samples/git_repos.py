"""Real git repositories built in temporary directories, shaped like a service repo around a deploy.

order-service has tags v2.13.2 and v2.14.0 (a config change, a migration, a code change), symlinks in and
out of the tree (and to a directory), a renamed file, a binary file, a big file, and secret files committed by mistake.
`make_release_history` dates a main line of merges and tags relative to a given now, for the change timeline.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

BIG_FILE_LINES = 5000
BIG_FILE_BYTES = BIG_FILE_LINES * 16
"""data/events.log: each line is 'event NNNNN ok.' and a newline (16 bytes): 80,000 bytes in all."""


def git(repo: Path, *args: str, date: str = "2026-11-01T10:00:00Z") -> str:
    """Run git in `repo` with a fixed identity and date, isolated from the user's configuration."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def write(repo: Path, path: str, content: str | bytes) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)


def symlink(repo: Path, path: str, target: str) -> None:
    link = repo / path
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)


def commit(repo: Path, message: str, date: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)


APP_YAML_V1 = "server:\n  port: 8080\ndb:\n  pool_size: 20\n  timeout_ms: 500\nretries: 3\n"
APP_YAML_V2 = (
    "server:\n  port: 8080\ndb:\n  pool_size: 5\n  timeout_ms: 200\nretries: 0\nfeature_flags:\n  new_checkout: true\n"
)
PNG_BYTES = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(256)) * 4


def make_order_service(root: Path) -> Path:
    """order-service at v2.13.2 (older) and v2.14.0 (a tag two commits later); main is at v2.14.0."""
    repo = root / "order-service"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "README.md", "# order-service\n")
    write(repo, "config/app.yaml", APP_YAML_V1)
    write(repo, "config/.env.example", "DATABASE_URL=\n")
    write(repo, "src/orders/handler.py", "def handle(order):\n    return save(order)\n")
    write(repo, "src/orders/util.py", "def money(cents):\n    return cents / 100\n")
    write(repo, "migrations/0041_init.sql", "CREATE TABLE orders (id int);\n")
    write(repo, "assets/logo.png", PNG_BYTES)
    write(repo, "data/events.log", "".join(f"event {i:05d} ok.\n" for i in range(BIG_FILE_LINES)))
    write(repo, ".env", "DATABASE_PASSWORD=hunter2hunter2\n")
    write(repo, "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
    write(repo, "deploy/secrets/db.yaml", "password: hunter2\n")
    symlink(repo, "leak", "/etc/passwd")
    symlink(repo, "config/sneaky", "../../../etc/hostname")
    symlink(repo, "config/current.yaml", "app.yaml")
    symlink(repo, "config/env-link", "../.env")
    symlink(repo, "settings", "config")
    commit(repo, "Initial service", "2026-11-01T10:00:00Z")
    git(repo, "tag", "v2.13.2")

    write(repo, "src/orders/handler.py", "def handle(order):\n    validate(order)\n    return save(order)\n")
    git(repo, "mv", "src/orders/util.py", "src/orders/helpers.py")
    commit(repo, "Validate orders before saving", "2026-11-20T10:00:00Z")
    write(repo, "config/app.yaml", APP_YAML_V2)
    write(repo, "migrations/0042_add_index.sql", "CREATE INDEX orders_id ON orders (id);\n")
    write(repo, ".env", "DATABASE_PASSWORD=correcthorsebattery\n")
    commit(repo, "Tune the DB pool and add an index", "2026-11-29T10:00:00Z")
    git(repo, "tag", "-a", "v2.14.0", "-m", "release 2.14.0", date="2026-11-29T11:00:00Z")
    return repo


def make_wide_change(root: Path, files: int = 12, lines: int = 400) -> Path:
    """A repository where v1..v2 rewrites `files` files of `lines` lines each: a diff far over any cap."""
    repo = root / "wide"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for n in range(files):
        write(repo, f"src/module_{n:02d}.py", "".join(f"value_{i} = {i}\n" for i in range(lines)))
    write(repo, "config/limits.yaml", "max_connections: 100\n")
    commit(repo, "v1", "2026-11-01T10:00:00Z")
    git(repo, "tag", "v1")
    for n in range(files):
        write(repo, f"src/module_{n:02d}.py", "".join(f"value_{i} = {i * 2}\n" for i in range(lines)))
    write(repo, "config/limits.yaml", "max_connections: 10\n")
    commit(repo, "v2", "2026-11-02T10:00:00Z")
    git(repo, "tag", "v2")
    return repo


RELEASE_HISTORY = {
    "initial": timedelta(days=3),
    "older merge": timedelta(hours=2, minutes=30),
    "branch commit": timedelta(minutes=50),
    "merge": timedelta(minutes=45),
    "squash merge": timedelta(minutes=42),
    "tag": timedelta(minutes=40),
    "plain commit": timedelta(minutes=5),
}
"""How long before `now` each step of `make_release_history` happens."""


def make_release_history(root: Path, now: datetime, name: str = "order-service") -> Path:
    """A service's main line around a release, dated relative to `now` (see RELEASE_HISTORY): v2.13.2 three days
    ago (lightweight), an older merge (#398), a merge of a branch (#412), a squash merge (#415), the annotated tag
    v2.14.0, then a plain commit that is neither a tag nor a merge."""
    repo = root / name
    repo.mkdir()

    def at(step: str) -> str:
        return (now - RELEASE_HISTORY[step]).strftime("%Y-%m-%dT%H:%M:%SZ")

    git(repo, "init", "-q", "-b", "main")
    write(repo, "config/database.yaml", "pool:\n  max_size: 50\n")
    commit(repo, "Initial service", at("initial"))
    git(repo, "tag", "v2.13.2")
    for branch, file, message, merged in (
        ("retry-budget", "src/retry.py", "Add a retry budget", "older merge"),
        ("pool-for-pgbouncer", "config/database.yaml", "Size the pool for pgbouncer", "merge"),
    ):
        git(repo, "checkout", "-q", "-b", branch)
        write(repo, file, f"# {message}\npool:\n  max_size: 10\n")
        commit(repo, message, at("branch commit") if merged == "merge" else at("older merge"))
        git(repo, "checkout", "-q", "main")
        number = 398 if branch == "retry-budget" else 412
        git(
            repo,
            "merge",
            "-q",
            "--no-ff",
            "-m",
            f"Merge pull request #{number} from acme/{branch}",
            branch,
            date=at(merged),
        )
    write(repo, "src/receipts.py", "ASYNC_RECEIPTS = True\n")
    commit(repo, "Async receipts behind a flag (#415)", at("squash merge"))
    git(repo, "tag", "-a", "v2.14.0", "-m", "release 2.14.0", date=at("tag"))
    write(repo, "README.md", "# order-service\n")
    commit(repo, "Update the README", at("plain commit"))
    return repo
