"""Evaluation scenarios: an incident's task, recorded tool outputs, expectations and a scripted investigation.

Scenarios are TOML files (stdlib `tomllib`, no new dependency); a malformed one is a ValueError that
names the file and the field, so a scenario author knows exactly what to fix.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from kernel import FINISH_TOOL, LOAD_TOOLS_TOOL, READ_OUTPUT_TOOL, Confidence, StopReason
from opsagent_tools.mcp import full_name
from opsagent_tools.mcp.settings import MAX_SERVER_NAME, SERVER_NAME
from opsagent_tools.runbooks.documents import FrontMatterError, parse_runbook

SCENARIO_SUFFIX = ".toml"
TOOLS_CONTEXT = "tools"
"""The validation-context key holding the tool names a scenario may mention (the eval catalogue)."""


class Recording(BaseModel):
    """One recorded tool output: used for a call of `tool` whose arguments include all of `args`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    """A subset of the call's arguments (strings compared case-insensitively); the most specific match wins."""
    output: str | None = None
    error: str | None = None
    """A recorded failure: the call fails with this message, as the backend's ToolFailure would."""

    @field_validator("tool")
    @classmethod
    def _known(cls, tool: str, info: ValidationInfo) -> str:
        return known_tool(tool, info)

    @model_validator(mode="after")
    def _output_or_error(self) -> Self:
        if (self.output is None) == (self.error is None):
            raise ValueError("give exactly one of 'output' (what the tool returned) or 'error' (how it failed)")
        return self


class RecordedMcpTool(BaseModel):
    """A tool of an MCP server as the server lists it, and whether the operator lists it as read-only; the
    evaluation builds it with the production builder, so the model sees what production would show."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server: str = Field(pattern=SERVER_NAME.pattern, max_length=MAX_SERVER_NAME)
    tool: str = Field(min_length=1)
    """The server's own name for it; the model calls `<server>__<tool>`, as recordings and expectations do."""
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    read_only: bool = False


class RecordedIncident(BaseModel):
    """A past incident the scenario's memory holds: what `similar_incidents` finds, through the real run store's
    full-text search. It finished `days_ago` days before the evaluation runs (within the default retention)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str = Field(min_length=1)
    services: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    """Its alert's labels as `name=value`."""
    summary: str = ""
    root_cause: str = ""
    confidence: Confidence | None = None
    outcome: StopReason = StopReason.FINISH
    days_ago: float = Field(ge=0, lt=180)
    helpful: int = Field(default=0, ge=0)
    """People who rated its answer 👍."""
    wrong: int = Field(default=0, ge=0)
    """People who rated its answer 👎; `corrections` are the reasons some of them gave."""
    corrections: list[str] = Field(default_factory=list)


class ExpectedFact(BaseModel):
    """A fact the final answer must state: any one of the phrasings (regular expressions, case-insensitive)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    about: str = Field(min_length=1)
    """What the fact is, shown when it is missing, e.g. "the bad deploy"."""
    any_of: list[str] = Field(min_length=1)

    @field_validator("any_of")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern, re.IGNORECASE)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from exc
        return patterns


class ExpectedCall(BaseModel):
    """A call the investigation should make: the tool, and a subset of its arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("tool")
    @classmethod
    def _known(cls, tool: str, info: ValidationInfo) -> str:
        return known_tool(tool, info)


class Expectations(BaseModel):
    """What a good investigation of the scenario does and concludes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    facts: list[ExpectedFact] = Field(min_length=1)
    calls: list[ExpectedCall] = Field(default_factory=list)
    ordered: bool = False
    """Whether `calls` must happen in the order given (other calls may come between them)."""
    forbidden: list[str] = Field(default_factory=list)
    """Tools that must not be called, e.g. rollback_deployment when the deploy is a red herring."""

    @field_validator("forbidden")
    @classmethod
    def _known(cls, tools: list[str], info: ValidationInfo) -> list[str]:
        return [known_tool(tool, info) for tool in tools]


class ScriptTurn(BaseModel):
    """One model turn of the scenario's scripted investigation: a thought and one call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thought: str = ""
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("tool")
    @classmethod
    def _known(cls, tool: str, info: ValidationInfo) -> str:
        return known_tool(tool, info, also=(FINISH_TOOL, READ_OUTPUT_TOOL, LOAD_TOOLS_TOOL))


class Scenario(BaseModel):
    """One evaluation scenario; `name` is the file's stem."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str = Field(min_length=1)
    task: str = Field(min_length=1)
    """The on-call's message that starts the investigation."""
    data: str = ""
    """What the task comes with (an alert's details, an earlier answer), fenced as data, as in production."""
    repos: list[str] = Field(min_length=1)
    """The repositories the repository tools offer (their description names them, as in production)."""
    mcp_tools: list[RecordedMcpTool] = Field(default_factory=list)
    """MCP tools this scenario's catalogue adds to the production one (their outputs are recordings too)."""
    recordings: list[Recording] = Field(min_length=1)
    runbooks: dict[str, str] = Field(default_factory=dict)
    """The runbook library of the incident, by path ("checkout/high-5xx.md" = its Markdown): named at the start
    when they match the task, and read by the real runbook tools."""
    past_incidents: list[RecordedIncident] = Field(default_factory=list)
    """The memory of past incidents of the deployment (none: `similar_incidents` is not offered, as with the memory
    off): remembered in a run store of the evaluation's own and searched for real."""
    expect: Expectations
    script: list[ScriptTurn] = Field(min_length=1)
    """A reasonable investigation, played by the scripted model in CI; it must end with finish."""

    @field_validator("runbooks")
    @classmethod
    def _readable(cls, runbooks: dict[str, str]) -> dict[str, str]:
        for path, text in runbooks.items():
            if not path.endswith(".md"):
                raise ValueError(f"{path}: a runbook's path ends with .md")
            try:
                parse_runbook(path.removesuffix(".md"), text)
            except FrontMatterError as exc:
                raise ValueError(f"{path}: {exc}") from exc
        return runbooks

    @model_validator(mode="after")
    def _memory_for_its_tool(self) -> Self:
        if any(turn.tool == "similar_incidents" for turn in self.script) and not self.past_incidents:
            raise ValueError("the script calls similar_incidents: give the memory it searches as [[past_incidents]]")
        return self

    @field_validator("script")
    @classmethod
    def _ends_with_finish(cls, script: list[ScriptTurn]) -> list[ScriptTurn]:
        for i, turn in enumerate(script[:-1]):
            if turn.tool == FINISH_TOOL:
                raise ValueError(f"turn {i} calls finish, but finish must be the last turn")
        last = script[-1]
        if last.tool != FINISH_TOOL or not isinstance(last.args.get("answer"), str):
            raise ValueError(f'the last turn must be tool = "{FINISH_TOOL}" with args.answer, the final answer')
        return script


def known_tool(name: str, info: ValidationInfo, *, also: Collection[str] = ()) -> str:
    """`name` if the catalogue in the validation context (or `also`) has it; else a ValueError listing the known names."""
    catalogue = (info.context or {}).get(TOOLS_CONTEXT)
    if catalogue is None:
        raise ValueError(f"scenarios are validated against the tool catalogue: pass context={{'{TOOLS_CONTEXT}': …}}")
    known = {*catalogue, *also}
    if name not in known:
        raise ValueError(f"unknown tool {name!r}; known: {', '.join(sorted(known))}")
    return name


def load_scenario(path: Path, tool_names: Collection[str]) -> Scenario:
    """Read and validate one scenario file; any problem is a ValueError naming the file and the field."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read scenario {path}: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from exc
    if "name" in data:
        raise ValueError(f"{path}: name: not allowed, the scenario's name is its file name ({path.stem})")
    known = {*tool_names, *_mcp_tool_names(data.get("mcp_tools"))}
    try:
        return Scenario.model_validate({"name": path.stem, **data}, context={TOOLS_CONTEXT: known})
    except ValidationError as exc:
        problems = [
            f"  {'.'.join(map(str, e['loc'])) or '(file)'}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        ]
        raise ValueError(f"{path}: invalid scenario:\n" + "\n".join(problems)) from exc


def _mcp_tool_names(declared: Any) -> set[str]:
    """The full names of the MCP tools a scenario declares (malformed entries are reported by validation)."""
    entries = declared if isinstance(declared, list) else []
    return {
        full_name(entry["server"], entry["tool"])
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("server"), str) and isinstance(entry.get("tool"), str)
    }


def load_scenarios(target: Path, tool_names: Collection[str]) -> list[Scenario]:
    """One scenario file, or every `*.toml` in a directory (sorted by name)."""
    if target.is_dir():
        paths = sorted(target.glob(f"*{SCENARIO_SUFFIX}"))
        if not paths:
            raise ValueError(f"no *{SCENARIO_SUFFIX} scenario files in {target}")
        return [load_scenario(path, tool_names) for path in paths]
    if not target.exists():
        raise ValueError(f"{target} does not exist: pass a scenario file or a directory of them (evals/scenarios)")
    return [load_scenario(target, tool_names)]
