"""Suite (x): every module-level compiled regex of kernel, opsagent_tools and bot, timed on hostile 10k-character texts.

A backtracking regex on outside text (a model's reply, a log line, a runbook) can hold the GIL for minutes
(issue 19); this suite finds the patterns by importing the packages, so a new one is covered without a list to
keep. Each pattern gets inputs generated from its own parts (runs of every character and class it names, its
literals repeated, pairs of them alternating, a prefix of its literals then a run then a character that fails the
match) plus the classic hostile shapes (unbalanced quotes and brackets, nested openers, whitespace runs), each
exactly `LENGTH` characters, and is applied the way the code applies it (the methods called on its name in the
defining module and the modules importing it; all of search, match, fullmatch and finditer when unknown).

The timing runs in a forked worker: a pattern still running after `CAP_S` is killed and reported as over the cap.
"""

from __future__ import annotations

import importlib
import itertools
import multiprocessing
import pkgutil
import re
import re._constants as sre
import re._parser as sre_parse
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import ModuleType
from typing import Any

PACKAGES = ("kernel", "opsagent_tools", "bot")
LENGTH = 10_000
"""Characters in each hostile input."""
TARGET_MS = 50.0
"""The most one application of a pattern to one input may take."""
CAP_S = 5.0
"""A pattern still running on one input after this is killed and reported as over it."""
METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")
UNKNOWN_USE = ("search", "match", "fullmatch", "finditer")
_APPLY: dict[str, Callable[[re.Pattern[str], str], object]] = {
    "search": lambda p, text: p.search(text),
    "match": lambda p, text: p.match(text),
    "fullmatch": lambda p, text: p.fullmatch(text),
    "finditer": lambda p, text: list(p.finditer(text)),
    "findall": lambda p, text: p.findall(text),
    "sub": lambda p, text: p.sub("", text),
    "subn": lambda p, text: p.subn("", text),
    "split": lambda p, text: p.split(text),
}
_COMMON = " \t\na0_-.:,;=/\"'`\\[]{}()<>#*|é"
"""Characters tried on every pattern besides its own: separators, quotes, brackets and a non-ASCII letter."""
_SHAPES = {
    "unbalanced double quotes": '"',
    "unbalanced single quotes": "'",
    "escaped quotes": '\\"',
    "backslashes then a quote": '\\\\"a',
    "nested brackets": "[",
    "nested braces": "{",
    "nested parentheses": "(",
    "nested angle brackets": "<",
    "nested openers": "[{(<",
    "nested JSON objects": '{"a": ',
    "nested JSON strings": '{"a": "',
    "key-value lines": "key: value\n",
    "assignments": "a=b ",
    "words and spaces": "word ",
    "spaces and tabs": " \t",
    "blank lines": "\n \n",
    "fences": "```",
}


@dataclass(frozen=True, slots=True)
class Found:
    """A compiled pattern and where it lives: `module`, and `name` (an attribute path such as `_ACTIONS[0][0]`)."""

    module: str
    name: str
    pattern: re.Pattern[str]
    uses: tuple[str, ...]
    """The methods the code calls on it; `UNKNOWN_USE` when none was seen (it is passed around, or in a table)."""

    @property
    def label(self) -> str:
        return f"{self.module}.{self.name}"


def discover(packages: tuple[str, ...] = PACKAGES) -> list[Found]:
    """Every compiled `str` pattern reachable from the packages' modules: module attributes, class attributes,
    and inside module-level tuples, lists, dicts and our own objects (three levels deep); each once, named after
    the module that assigns it."""
    modules = list(_modules(packages))
    sources = {module.__name__: _source(module) for module in modules}
    places: dict[int, list[tuple[str, str, re.Pattern[str]]]] = {}
    for module in modules:
        for name, value in vars(module).items():
            for path, pattern in _patterns(value, name, depth=0):
                places.setdefault(id(pattern), []).append((module.__name__, path, pattern))
    found = []
    for candidates in places.values():
        module, path, pattern = next(
            (c for c in candidates if _assigns(sources[c[0]], c[1].split("[")[0].split(".")[0])), candidates[0]
        )
        found.append(Found(module, path, pattern, _uses(path, module, sources)))
    return sorted(found, key=lambda f: f.label)


def _modules(packages: tuple[str, ...]) -> Iterator[ModuleType]:
    for package_name in packages:
        package = importlib.import_module(package_name)
        yield package
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            yield importlib.import_module(info.name)


def _source(module: ModuleType) -> str:
    file = getattr(module, "__file__", None)
    return Path(file).read_text(encoding="utf-8") if file else ""


def _patterns(value: object, path: str, depth: int) -> Iterator[tuple[str, re.Pattern[str]]]:
    if isinstance(value, re.Pattern):
        if isinstance(value.pattern, str):
            yield path, value
        return
    if depth >= 3:
        return
    children: list[tuple[str, object]] = []
    if isinstance(value, (tuple, list)):
        children = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    elif isinstance(value, dict):
        children = [(f"{path}[{key!r}]", item) for key, item in value.items()]
    elif isinstance(value, type) and value.__module__.split(".")[0] in PACKAGES:
        children = [(f"{path}.{key}", item) for key, item in vars(value).items()]
    elif type(value).__module__.split(".")[0] in PACKAGES and not callable(value):
        names = getattr(type(value), "__slots__", ()) or getattr(value, "__dict__", {})
        children = [(f"{path}.{key}", getattr(value, key, None)) for key in names]
    for child_path, child in children:
        yield from _patterns(child, child_path, depth + 1)


def _assigns(source: str, name: str) -> bool:
    return re.search(rf"^{re.escape(name)}\s*(?::[^=\n]*)?=", source, re.M) is not None


def _uses(path: str, module: str, sources: dict[str, str]) -> tuple[str, ...]:
    """The methods called on the pattern's name in its module and in the modules that import it from there."""
    if not re.fullmatch(r"\w+", path):
        return UNKNOWN_USE
    readers = [sources[module]] + [
        text for other, text in sources.items() if other != module and f"from {module} import" in text and path in text
    ]
    called = re.compile(rf"\b{re.escape(path)}\.({'|'.join(METHODS)})\(")
    uses = {method for text in readers for method in called.findall(text)}
    return tuple(method for method in METHODS if method in uses) or UNKNOWN_USE


def hostile_inputs(pattern: re.Pattern[str], length: int = LENGTH) -> dict[str, str]:
    """Named inputs of exactly `length` characters made to make `pattern` backtrack, if it can."""
    own_chars, literal_chars, literals = _parts(pattern)
    atoms = list(dict.fromkeys([*own_chars, *_COMMON]))
    ends = ["\x00", *literal_chars[:8]]  # a character the pattern names literally is the likeliest to fail it
    inputs: dict[str, str] = {}

    def add(name: str, text: str) -> None:
        if text not in inputs.values():
            inputs[name] = text

    for atom in atoms:
        add(f"run of {atom!r}", _fill(atom, length))
    for literal in literals:
        add(f"{literal!r} repeated", _fill(literal, length))
    for a, b in itertools.combinations(atoms[:14], 2):
        add(f"{a + b!r} repeated", _fill(a + b, length))
    for prefix in ["", *literals[:3]]:
        for atom in atoms[:14]:
            for end in (end for end in ends if end != atom):
                add(f"{prefix!r} + run of {atom!r} + {end!r}", _ended(prefix + _fill(atom, length), end, length))
    for name, unit in _SHAPES.items():
        add(name, _fill(unit, length))
        spaced = _fill(unit, length // 2) + _fill(" ", length)
        add(f"{name}, then a run of spaces and a NUL", _ended(spaced, "\x00", length))
    return inputs


def _fill(unit: str, length: int) -> str:
    return (unit * (length // len(unit) + 1))[:length]


def _ended(text: str, end: str, length: int) -> str:
    """The first characters of `text`, then `end`: `length` characters in all."""
    return text[: length - len(end)] + end


def _parts(pattern: re.Pattern[str]) -> tuple[list[str], list[str], list[str]]:
    """The characters the pattern names (a few of each class), those it names literally, and its literal strings,
    each in the order they appear."""
    chars: list[str] = []
    literals: list[str] = []
    _walk(sre_parse.parse(pattern.pattern, pattern.flags), chars, literals)
    literal_chars = list(dict.fromkeys(char for literal in literals for char in literal))
    return list(dict.fromkeys(chars)), literal_chars, list(dict.fromkeys(lit for lit in literals if len(lit) > 1))


_CATEGORY_CHARS = {
    sre.CATEGORY_DIGIT: "7",
    sre.CATEGORY_NOT_DIGIT: "a",
    sre.CATEGORY_SPACE: " \t\n",
    sre.CATEGORY_NOT_SPACE: "a-",
    sre.CATEGORY_WORD: "a_7",
    sre.CATEGORY_NOT_WORD: " -",
}


def _walk(items: Any, chars: list[str], literals: list[str]) -> None:
    run = ""
    for op, arg in items:
        if op is sre.LITERAL:
            run += chr(arg)
            chars.append(chr(arg))
            continue
        literals.append(run)
        run = ""
        if op is sre.NOT_LITERAL:
            chars.extend([chr(arg), "x" if chr(arg) != "x" else "y"])
        elif op is sre.IN:
            chars.extend(_class_chars(arg))
        elif op is sre.ANY:
            chars.extend(["a", "\n"])
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            _walk(arg[2], chars, literals)
        elif op is sre.SUBPATTERN:
            _walk(arg[3], chars, literals)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            _walk(arg[1], chars, literals)
        elif op is sre.ATOMIC_GROUP:
            _walk(arg, chars, literals)
        elif op is sre.BRANCH:
            for branch in arg[1]:
                _walk(branch, chars, literals)
        elif op is sre.GROUPREF_EXISTS:
            for branch in arg[1:]:
                if branch is not None:
                    _walk(branch, chars, literals)
    literals.append(run)


def _class_chars(items: list[tuple[Any, Any]]) -> list[str]:
    chars = []
    for op, arg in items:
        if op is sre.LITERAL:
            chars.append(chr(arg))
        elif op is sre.RANGE:
            low, high = arg
            chars.extend([chr(low), chr((low + high) // 2), chr(high)])
        elif op is sre.CATEGORY:
            chars.extend(_CATEGORY_CHARS.get(arg, ""))
        elif op is sre.NEGATE:
            chars.extend(["x", "7", " ", "\n"])
    return chars


def _worst(found: Found, length: int, channel: Connection) -> dict[str, Any]:
    """The slowest (input, method) of one pattern; each input's name is sent before it runs, so a kill names it."""
    worst: dict[str, Any] = {"ms": 0.0, "input": "", "method": ""}
    inputs = hostile_inputs(found.pattern, length)
    for name, text in inputs.items():
        channel.send(("input", name))
        for method in found.uses:
            apply = _APPLY[method]
            spent = _once(apply, found.pattern, text)
            if 1.0 < spent < TARGET_MS * 10:  # close enough to the target for the least of three to matter
                spent = min(spent, _once(apply, found.pattern, text), _once(apply, found.pattern, text))
            if spent > worst["ms"]:
                worst = {"ms": spent, "input": name, "method": method}
    return {**worst, "inputs": len(inputs)}


def _once(apply: Callable[[re.Pattern[str], str], object], pattern: re.Pattern[str], text: str) -> float:
    began = time.perf_counter()
    apply(pattern, text)
    return (time.perf_counter() - began) * 1000


def _worker(found: list[Found], length: int, channel: Connection) -> None:
    while (index := channel.recv()) is not None:
        channel.send(("done", _worst(found[index], length, channel)))


class _Pool:
    """One forked worker at a time (it inherits the imported modules); a worker still on one input after `CAP_S`
    is killed, the pattern reported as over the cap, and the next one forked."""

    def __init__(self, found: list[Found], length: int) -> None:
        self._found, self._length = found, length
        self._context = multiprocessing.get_context("fork")
        self._process: Any = None
        self._channel: Connection | None = None

    def measure(self, index: int) -> dict[str, Any]:
        if self._process is None or self._channel is None:
            self._channel, child = self._context.Pipe()
            self._process = self._context.Process(target=_worker, args=(self._found, self._length, child), daemon=True)
            self._process.start()
        self._channel.send(index)
        current = ""
        while self._channel.poll(CAP_S):
            kind, value = self._channel.recv()
            if kind == "done":
                return value
            current = value
        self.close()
        return {"ms": None, "input": current, "method": "", "inputs": None}

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
            self._process, self._channel = None, None


def regexes(length: int = LENGTH) -> dict[str, Any]:
    """(x) The worst time of each discovered pattern on its hostile inputs of `length` characters, slowest first."""
    began = time.perf_counter()
    found = discover()
    pool = _Pool(found, length)
    rows = []
    try:
        for index, item in enumerate(found):
            rows.append({"pattern": item.label, "uses": list(item.uses), **pool.measure(index)})
    finally:
        pool.close()
    rows.sort(key=lambda row: -(row["ms"] if row["ms"] is not None else float("inf")))
    return {
        "length": length,
        "target_ms": TARGET_MS,
        "cap_s": CAP_S,
        "patterns": len(found),
        "rows": rows,
        "pass": all(row["ms"] is not None and row["ms"] <= TARGET_MS for row in rows),
        "seconds": time.perf_counter() - began,
    }
