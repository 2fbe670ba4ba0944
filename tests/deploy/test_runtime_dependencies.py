"""The runtime install fits the job: `pip install opsagent` brings every package the product code imports, each
runtime dependency says why it is there, and none is a test or docs tool (those are the [dev] and [docs] extras).

The install's size is not checked here (making an environment takes longer than a test may): `make install-size`
does it, and CI runs it.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT_TEXT = (ROOT / "pyproject.toml").read_text()
PROJECT = tomllib.loads(PYPROJECT_TEXT)["project"]
CODE_PACKAGES = ("bot", "kernel", "opsagent_tools")


def runtime_closure() -> set[str]:
    """The distributions `pip install opsagent` installs: the runtime dependencies and theirs, with the extras asked
    for, as this environment's metadata lists them."""
    pending = [Requirement(text) for text in PROJECT["dependencies"]]
    closure: set[str] = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in closure:
            continue
        closure.add(name)
        try:
            listed = requires(requirement.name) or []
        except PackageNotFoundError:
            continue
        for text in listed:
            needed = Requirement(text)
            extras = [{"extra": extra} for extra in requirement.extras] or [{"extra": ""}]
            if needed.marker is None or any(needed.marker.evaluate(extra) for extra in extras):
                pending.append(needed)
    return closure


def imported_modules() -> dict[str, Path]:
    """Top-level modules the product code imports (anywhere in a file), outside the standard library and our own
    packages → one file that imports it."""
    found: dict[str, Path] = {}
    for package in CODE_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in CODE_PACKAGES:
                        found.setdefault(top, path.relative_to(ROOT))
    return found


def test_the_runtime_install_brings_every_package_the_code_imports():
    closure, providers = runtime_closure(), packages_distributions()
    imported = imported_modules()
    assert {"aiohttp", "lightkube", "yaml"} <= imported.keys(), "the scan finds the imports"
    missing = [
        f"{module} (imported by {path}; from {', '.join(providers.get(module, ['no installed distribution']))})"
        for module, path in sorted(imported.items())
        if not {canonicalize_name(name) for name in providers.get(module, [])} & closure
    ]
    assert missing == [], "add these to [project] dependencies with a comment saying why, or import them in tests only"


def test_every_runtime_dependency_says_why_it_is_there():
    block = PYPROJECT_TEXT.split("\ndependencies = [\n", 1)[1].split("\n]\n", 1)[0]
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    assert len(lines) == len(PROJECT["dependencies"])
    assert [line for line in lines if "  # " not in line] == []


def test_no_test_or_docs_tool_is_a_runtime_dependency():
    runtime = {canonicalize_name(Requirement(text).name) for text in PROJECT["dependencies"]}
    extras = PROJECT["optional-dependencies"]
    tools = {canonicalize_name(Requirement(text).name) for text in extras["dev"] + extras["docs"]}
    assert {"pytest", "ruff", "mkdocs", "mkdocs-material"} <= tools
    assert runtime & tools == set()
