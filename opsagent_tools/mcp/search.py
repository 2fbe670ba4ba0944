"""`mcp_search(query)`: the model looks MCP tools up by keyword and gets their schemas, instead of receiving
every schema of a large server on every turn. A tool found this way is called by its full name as usual.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Annotated

from pydantic import Field

from kernel import Tool, ToolFailure, ToolOutput, tool_from_function
from opsagent_tools.mcp.results import result_headline
from opsagent_tools.mcp.tools import McpToolEntry

MCP_SEARCH_TOOL = "mcp_search"
MAX_SCHEMA_CHARS = 2000
_WORD = re.compile(r"[a-z0-9]+")


def search_entries(entries: Sequence[McpToolEntry], query: str, limit: int) -> list[McpToolEntry]:
    """The entries matching most of the query's words: a word in the name counts three, in the description or
    an argument's name one; ties keep the catalogue's order."""
    words = {word for word in _WORD.findall(query.lower()) if len(word) > 1}
    scored: list[tuple[int, int, McpToolEntry]] = []
    for position, entry in enumerate(entries):
        name = entry.name.lower()
        text = " ".join((entry.tool.description, *entry.tool.spec.parameters.get("properties", {}))).lower()
        score = sum(3 if word in name else 1 if word in text else 0 for word in words)
        if score:
            scored.append((-score, position, entry))
    return [entry for _, _, entry in sorted(scored, key=lambda item: item[:2])[:limit]]


def mcp_search_tool(entries: Sequence[McpToolEntry]) -> Tool:
    """The `mcp_search` tool over `entries` (every MCP tool, offered every turn or not)."""
    deferred = [entry for entry in entries if entry.tool.deferred]
    servers = sorted({entry.server for entry in deferred})
    where = ", ".join(f"'{s}' ({sum(e.server == s for e in deferred)} tools)" for s in servers)

    async def mcp_search(
        query: Annotated[str, Field(description="Keywords for what you need, e.g. 'dashboard latency' or 'incident'.")],
        limit: Annotated[int, Field(ge=1, le=10, description="How many tools to return.")] = 5,
    ) -> ToolOutput:
        found = search_entries(entries, query, limit)
        if not found:
            raise ToolFailure(
                f"no MCP tool matches {query!r}. Try other keywords (a noun from the task, such as a product or an "
                f"object: 'dashboard', 'alert', 'deploy'); searchable servers: {where or 'none'}."
            )
        blocks = [_describe(entry) for entry in found]
        text = (
            f"{len(found)} MCP tools match {query!r}:\n\n" + "\n\n".join(blocks) + "\n\nCall one by its full name with "
            "arguments that follow its schema."
        )
        names = ", ".join(entry.name for entry in found)
        return ToolOutput(
            text, headline=result_headline(f"{len(found)} MCP tool{'' if len(found) == 1 else 's'}: {names}")
        )

    mcp_search.__doc__ = (
        "Look MCP tools up by keyword and get their full names and argument schemas. Some MCP servers have "
        f"too many tools to list every turn: {where or 'none'}; their tools are only found through this search, "
        "then called by their full name like any other tool."
    )
    return tool_from_function(mcp_search, name=MCP_SEARCH_TOOL, timeout=5.0, returns="the matching tools and schemas")


def _describe(entry: McpToolEntry) -> str:
    schema = json.dumps(entry.tool.spec.parameters, separators=(",", ":"), ensure_ascii=False)
    if len(schema) > MAX_SCHEMA_CHARS:
        schema = schema[:MAX_SCHEMA_CHARS] + " … (schema cut; the server checks the rest)"
    return f"{entry.name}\n  {entry.tool.description}\n  arguments (JSON Schema): {schema}"
