"""docs/reference/configuration.md, generated from the settings models: every section of opsagent.toml, each
key's type, default, environment variable and the docstring written beside it in the model.

The page says only what the models say: to change a line of it, change the model (its field's docstring or
`description`, its type, its default) and regenerate.
"""

from __future__ import annotations

import ast
import enum
import functools
import inspect
import itertools
import json
import textwrap
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import AwareDatetime, BaseModel
from pydantic.fields import FieldInfo

from bot.cli.reference.markdown import anchor, generated_note, inline
from bot.settings import CONFIG_ENV, ENV_NESTING, ENV_PREFIX, SHORT_LLM_VARIABLES, Settings

NAME = "<name>"
"""How a table of named sections (`[tools.mcp.servers.<name>]`) shows the name a person chooses."""
SCALARS = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    Path: "path",
}
BOUNDS = {
    annotated_types.Gt: ("gt", ">"),
    annotated_types.Ge: ("ge", "≥"),
    annotated_types.Lt: ("lt", "<"),
    annotated_types.Le: ("le", "≤"),
}
INTRO = f"""\
OpsAgent reads one TOML file: `--config PATH`, else `${CONFIG_ENV}`, else `./opsagent.toml` if it is there; without
one, every key below has its default. `opsagent init` writes a commented file and `opsagent check` says whether one
is valid: a mistake is named with its file or variable, its key and the nearest valid key.

Every key can also be set by an environment variable, `{ENV_PREFIX}<SECTION>{ENV_NESTING}<KEY>` in capitals with
`{ENV_NESTING}` between levels, which wins over the file; a list or a table is written as JSON there
(`{ENV_PREFIX}SLACK{ENV_NESTING}APPROVERS='["U012ABCDEF"]'`). Without an `[llm]` section, the model comes from
{", ".join(f"`{name}`" for name in SHORT_LLM_VARIABLES)} and the provider's own key variable.

Secrets never live in the file: a key ending in `_env` names the environment variable that holds the secret, which is
read when the bot starts.
"""


@dataclass(frozen=True)
class Section:
    """One `[a.b]` table of the file: its key path, the model that reads it, and what its parent says of it."""

    path: tuple[str, ...]
    model: type[BaseModel]
    said: str
    """The docstring of the field that holds this section in its parent ("" for none)."""
    optional: bool
    """Absent unless written (`None` by default), rather than present with its defaults."""


def configuration_reference() -> str:
    """The whole page, as Markdown (ends with one newline)."""
    sections = list(_sections(Settings, ()))
    lines = [
        "# Configuration reference",
        "",
        generated_note("the settings models"),
        "",
        INTRO,
        "| Section | What it is |",
        "| --- | --- |",
        *(
            f"| [`{_table(s.path)}`](#{anchor(_table(s.path))}) | {inline(_first_sentence(_about(s)))} |"
            for s in sections
        ),
        "",
    ]
    top = _key_table(Settings, ())
    if top:  # keys outside any section, written before the first one
        lines += ["## Top-level keys", "", *top, ""]
    for section in sections:
        lines += _section_lines(section)
    return "\n".join(lines).rstrip("\n") + "\n"


def _sections(model: type[BaseModel], path: tuple[str, ...]) -> Iterator[Section]:
    """Every section under `model` (itself excluded), depth first in the order the model declares them."""
    for name, field in model.model_fields.items():
        inner = _section_model(field.annotation)
        named = _named_sections_model(field.annotation)
        if inner is not None:
            said = _field_doc(model, name)
            yield Section((*path, name), inner, said, optional=_is_optional(field.annotation))
            yield from _sections(inner, (*path, name))
        elif named is not None:
            yield Section((*path, name, NAME), named, _field_doc(model, name), optional=True)
            yield from _sections(named, (*path, name, NAME))


def _section_lines(section: Section) -> list[str]:
    table = _table(section.path)
    lines = [f"## `{table}`", ""]
    about = _about(section)
    if about:
        lines += [inline(about), ""]
    if section.path[-1] == NAME:
        lines += ["One such section per name you choose (`<name>` stands for it), as many as you need.", ""]
    elif section.optional:
        lines += [f"Optional: `{table}` is unset unless the file (or an environment variable) sets it.", ""]
    table_of_keys = _key_table(section.model, section.path)
    lines += [*table_of_keys, ""] if table_of_keys else []
    subsections = [name for name, field in section.model.model_fields.items() if _is_section(field)]
    if subsections:
        lines += ["Its sections: " + ", ".join(_section_link(section, name) for name in subsections) + ".", ""]
    return lines


def _key_table(model: type[BaseModel], path: tuple[str, ...]) -> list[str]:
    """The keys of a section that are not sections themselves, a row each (no table when there are none)."""
    keys = [(name, field) for name, field in model.model_fields.items() if not _is_section(field)]
    rows = []
    for name, field in keys:
        doc = inline(_key_doc(model, name, field)).strip()
        # the variable on a line of its own in the widest column: a column of its own wraps it mid-name
        variable = f"Environment: `{_variable((*path, name))}`"
        rows.append(
            f"| `{name}` | {inline(_type_words(field))}; {inline(_default_words(field))} "
            f"| {f'{doc}<br>{variable}' if doc else variable} |"
        )
    return ["| Key | Type and default | What it is |", "| --- | --- | --- |", *rows] if rows else []


def _section_link(section: Section, name: str) -> str:
    field = section.model.model_fields[name]
    path = (*section.path, name, NAME) if _named_sections_model(field.annotation) else (*section.path, name)
    required = " (required)" if field.is_required() else ""
    return f"[`{_table(path)}`](#{anchor(_table(path))}){required}"


def _about(section: Section) -> str:
    """What the section is: its model's docstring, then what its parent's field says of it, if that adds."""
    own = _sentence(_clean(section.model.__doc__ or "").removeprefix(f"`{_table(section.path)}`: "))
    said = _clean(section.said)
    return f"{own} {said}".strip() if said != own else own


def _sentence(text: str) -> str:
    """A docstring that named its section first (`[slack]`: who may…), as a sentence once the name is gone."""
    return text[:1].upper() + text[1:]


def _is_section(field: FieldInfo) -> bool:
    return _section_model(field.annotation) is not None or _named_sections_model(field.annotation) is not None


def _section_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field's type is (maybe optional): that field is a section of its own."""
    members = [m for m in _members(annotation) if m is not type(None)]
    if len(members) == 1 and isinstance(members[0], type) and issubclass(members[0], BaseModel):
        return members[0]
    return None


def _named_sections_model(annotation: Any) -> type[BaseModel] | None:
    """The model of each value of a table of named sections (`dict[str, Model]`), else None."""
    members = [m for m in _members(annotation) if m is not type(None)]
    if len(members) == 1 and get_origin(members[0]) is dict:
        value = get_args(members[0])[1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value
    return None


def _members(annotation: Any) -> tuple[Any, ...]:
    if get_origin(annotation) is Annotated:
        return _members(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return get_args(annotation)
    return (annotation,)


def _is_optional(annotation: Any) -> bool:
    return type(None) in _members(annotation)


def _type_words(field: FieldInfo) -> str:
    """The key's type in a person's words, with its bounds (`number, > 0`)."""
    words = _annotation_words(field.annotation)
    bounds = [
        f"{sign} {getattr(item, attribute)}"
        for item in field.metadata
        for kind, (attribute, sign) in BOUNDS.items()
        if isinstance(item, kind)
    ]
    return ", ".join([words, *bounds])


def _annotation_words(annotation: Any) -> str:
    members = [m for m in _members(annotation) if m is not type(None)]
    if len(members) > 1:
        return " or ".join(_annotation_words(m) for m in members)
    (single,) = members
    origin, args = get_origin(single), get_args(single)
    if single in SCALARS:
        return SCALARS[single]
    if single is AwareDatetime:
        return "date-time with a time zone"
    if origin is Literal:
        return "one of " + ", ".join(f"`{json.dumps(value)}`" for value in args)
    if isinstance(single, type) and issubclass(single, enum.Enum):
        return "one of " + ", ".join(f"`{json.dumps(member.value)}`" for member in single)
    if origin in (list, tuple, set, frozenset):
        return f"list of {_plural(_annotation_words(args[0]))}"
    if origin is dict:
        return f"table of {_plural(_annotation_words(args[1]))}"
    if isinstance(single, type) and issubclass(single, BaseModel):
        return "section"
    return getattr(single, "__name__", str(single))


def _plural(words: str) -> str:
    return f"{words}s" if words in SCALARS.values() else words


def _default_words(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset by default"
    if isinstance(value, Mapping) and value and all(isinstance(v, BaseModel) for v in value.values()):
        return "built in: " + ", ".join(f"`{name}`" for name in value)
    return f"default `{_toml(value)}`"


def _toml(value: Any) -> str:
    """A default as it would be written in the file."""
    match value:
        case bool():
            return "true" if value else "false"
        case enum.Enum():
            return _toml(value.value)
        case int() | float():
            return repr(value)
        case str() | Path():
            return json.dumps(str(value), ensure_ascii=False)
        case frozenset() | set():
            return _toml(sorted(value))
        case list() | tuple():
            return "[" + ", ".join(_toml(item) for item in value) + "]"
        case Mapping():
            return "{" + ", ".join(f"{key} = {_toml(item)}" for key, item in value.items()) + "}"
        case _:
            return str(value)


def _key_doc(model: type[BaseModel], name: str, field: FieldInfo) -> str:
    """What a key is: its description or docstring, what its enum's values mean, and where its secret is."""
    parts = [_field_doc(model, name)]
    choices = [m for m in _members(field.annotation) if isinstance(m, type) and issubclass(m, enum.Enum)]
    for choice in choices:
        docs = _attribute_docs(choice)
        parts += [f"`{json.dumps(member.value)}`: {docs[member.name]}" for member in choice if member.name in docs]
    if name.endswith("_env") or name == "env":
        parts.append("A variable's name, not the secret: the value is read from the environment.")
    return " ".join(_clean(part) for part in parts if part)


def _field_doc(model: type[BaseModel], name: str) -> str:
    field = model.model_fields[name]
    return _clean(field.description or _attribute_docs(model).get(name, ""))


@functools.cache
def _attribute_docs(cls: type) -> Mapping[str, str]:
    """The docstring written under each attribute of `cls` and of the classes it inherits from (ours, not
    pydantic's): `name: type = default` then `\"\"\"what it is\"\"\"`."""
    docs: dict[str, str] = {}
    for ancestor in reversed(cls.__mro__):
        if ancestor.__module__.split(".")[0] not in {"bot", "opsagent_tools", "kernel"}:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(ancestor)))
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for statement, following in itertools.pairwise(body):
            target = _assigned_name(statement)
            said = (
                following.value.value
                if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                else None
            )
            if target and isinstance(said, str):
                docs[target] = inspect.cleandoc(said)
    return docs


def _assigned_name(statement: ast.stmt) -> str:
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return ""


def _clean(text: str) -> str:
    """A docstring as one paragraph."""
    return " ".join(text.split())


def _first_sentence(text: str) -> str:
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def _table(path: tuple[str, ...]) -> str:
    return f"[{'.'.join(path)}]"


def _variable(path: tuple[str, ...]) -> str:
    return ENV_PREFIX + ENV_NESTING.join(part.upper() for part in path)
