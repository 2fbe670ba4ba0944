#!/usr/bin/env python3
"""The runtime install: what `pip install opsagent` puts in a virtual environment, nothing for tests or docs.

    python3 scripts/runtime_install.py DIR            install it in DIR (what `make demo` runs on)
    python3 scripts/runtime_install.py --limit-mb N   install it in a new temporary directory, say its size and its
                                                      largest distributions, and exit 1 when it is over N MB
                                                      (`make install-size`, which CI runs)

The size is the whole environment as `du` counts it (allocated blocks): Python's venv files, pip, the dependencies,
opsagent, and the bytecode pip compiles as it installs. Python 3.11's venv module adds setuptools, which nothing
needs at runtime (pip builds opsagent's wheel in an isolated build environment): it is removed, as 3.12 never adds it.
Standard library only: it runs on the Python that makes the environment.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024
SHOWN = 12
"""How many of the largest distributions the size report lists."""


def install(target: Path) -> None:
    """A virtual environment in `target` (made if missing) with opsagent installed from this checkout, no extras."""
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
    pip = [str(target / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
    if list(target.glob("lib/python3*/site-packages/setuptools")):
        subprocess.run([*pip, "uninstall", "--yes", "setuptools"], check=True)
    subprocess.run([*pip, "install", "--upgrade", str(ROOT)], check=True)


def allocated(path: Path) -> int:
    """Bytes `du` counts under `path`: allocated blocks, each file once, symbolic links not followed."""
    files = [path, *path.rglob("*")]
    return sum(f.lstat().st_blocks * 512 for f in files)


def largest(target: Path) -> list[tuple[int, str]]:
    """(bytes, name) of the installed distributions, largest first: each one's files as its RECORD lists them."""
    sizes = []
    for record in target.glob("lib/python3*/site-packages/*.dist-info/RECORD"):
        site = record.parent.parent
        paths = {site / line.split(",", 1)[0] for line in record.read_text(encoding="utf-8").splitlines() if line}
        name = record.parent.name.removesuffix(".dist-info")
        sizes.append((sum(p.lstat().st_blocks * 512 for p in paths if p.exists()), name))
    return sorted(sizes, reverse=True)


def check_size(limit_mb: float) -> int:
    """Install into a new temporary directory and compare its size with `limit_mb`: 0 within it, 1 over it."""
    with tempfile.TemporaryDirectory(prefix="opsagent-runtime-") as scratch:
        target = Path(scratch) / "venv"
        install(target)
        size = allocated(target)
        print(f"runtime install (pip install opsagent, no extras): {size / MB:.1f} MB; the limit is {limit_mb:g} MB")
        for used, name in largest(target)[:SHOWN]:
            print(f"  {used / MB:5.1f} MB  {name}")
    if size > limit_mb * MB:
        print(
            f"the runtime install grew past {limit_mb:g} MB: find what the new weight is (above) and whether the bot "
            "needs it at runtime, or raise the limit in the Makefile on purpose (and the guide's number with it)",
            file=sys.stderr,
        )
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("target", nargs="?", type=Path, help="the virtual environment to install into")
    where.add_argument("--limit-mb", type=float, help="install into a temporary directory and check its size")
    args = parser.parse_args()
    if args.limit_mb is not None:
        return check_size(args.limit_mb)
    install(args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
