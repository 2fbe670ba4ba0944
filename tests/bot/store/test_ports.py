"""The store's shape: narrow ports, each method's contract written down, one adapter implementing them all, and no
consumer but the wiring holding the whole store.

Read from the code itself (its classes and its modules' syntax), so a port that grows past the rule, an adapter that
drifts from its port or a room that takes the whole store again fails here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import get_type_hints

import pytest

import bot
import bot.store
from bot.store.factory import open_store
from bot.store.ports import RunLookup
from bot.store.protocol import RunStore

MAX_PUBLIC_METHODS = 12
WIRING = ("bot/store/", "bot/app.py", "bot/serve.py", "bot/cli/")
"""Where a whole `RunStore` may be held: the store itself, and the code that opens it and hands its ports out."""
PORTS = get_type_hints(RunStore)
"""Each attribute of the store and the port it is typed with."""


def public_methods(cls: type) -> set[str]:
    """The public methods a class has, its own and those of its bases in our code (not object's, pydantic's…)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("bot."):
            names |= {
                name
                for name, value in vars(klass).items()
                if not name.startswith("_") and inspect.isfunction(inspect.unwrap(getattr(value, "__func__", value)))
            }
    return names


def store_classes() -> list[type]:
    modules = [importlib.import_module(info.name) for info in pkgutil.walk_packages(bot.store.__path__, "bot.store.")]
    return [
        cls
        for module in modules
        for cls in vars(module).values()
        if inspect.isclass(cls) and cls.__module__ == module.__name__
    ]


def test_the_rule_counts_what_it_should():
    assert public_methods(RunStore) == {"migrate", "close"}
    runs = public_methods(PORTS["runs"])
    assert public_methods(RunLookup) < runs, "the methods of a port's base count as its own"
    assert {"create_run", "checkpoint"} <= runs


@pytest.mark.parametrize("cls", store_classes(), ids=lambda cls: f"{cls.__module__}.{cls.__name__}")
def test_no_protocol_or_class_in_the_store_has_more_than_twelve_public_methods(cls: type) -> None:
    assert len(public_methods(cls)) <= MAX_PUBLIC_METHODS, sorted(public_methods(cls))


@pytest.mark.parametrize("attribute", sorted(PORTS))
def test_every_port_method_states_its_contract(attribute: str) -> None:
    port = PORTS[attribute]
    for name in public_methods(port):
        doc = inspect.getdoc(getattr(port, name)) or ""
        assert len(doc.split()) >= 5, f"{port.__name__}.{name} has no contract in its docstring"


@pytest.mark.parametrize("attribute", sorted(PORTS))
async def test_the_sql_adapter_implements_each_port_with_its_signatures(attribute: str, tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/runs.db")
    try:
        port, adapter = PORTS[attribute], getattr(store, attribute)
        for name in public_methods(port):
            promised = inspect.signature(getattr(port, name))
            given = inspect.signature(getattr(adapter, name))
            assert list(given.parameters.values()) == list(promised.parameters.values())[1:], f"{attribute}.{name}"
            assert given.return_annotation == promised.return_annotation, f"{attribute}.{name}"
    finally:
        await store.close()


def test_no_consumer_outside_the_wiring_takes_the_whole_store() -> None:
    root = Path(bot.__file__).parent.parent
    takers = set()
    for path in sorted(Path(root, "bot").rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where.startswith(WIRING):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            annotation = node.annotation if isinstance(node, ast.arg | ast.AnnAssign) else None
            if annotation is not None and "RunStore" in ast.unparse(annotation):
                takers.add(where)
    assert takers == set()
