"""An MCP tool result as the text the model reads: text and JSON as they are, resources with their URI,
images and audio named but never dumped, and an `isError` result as a failure the model can act on.

The text then goes through dispatch like any observation: redaction, truncation with a handle, fencing.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from typing import assert_never

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

MAX_RESULT_CHARS = 200_000
"""Text beyond this is cut here; the kernel still truncates what the model sees and keeps the rest behind a handle."""
NO_CONTENT = "(the tool returned no content)"
HEADLINE_CHARS = 120


def result_text(result: CallToolResult) -> str:
    """Every content block of the result as text, in order; the structured result when there is no content."""
    parts = [_block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, ensure_ascii=False, default=str)]
    text = "\n".join(part for part in parts if part) or NO_CONTENT
    if len(text) > MAX_RESULT_CHARS:
        text = f"{text[:MAX_RESULT_CHARS]}\n[… {len(text) - MAX_RESULT_CHARS:,} more characters cut by the MCP client]"
    return text


def result_headline(text: str, limit: int = HEADLINE_CHARS) -> str:
    """A result for people: its first line that says something, cut to `limit` (a server's text, shown as data)."""
    line = next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def masked(text: str, secrets: Iterable[str]) -> str:
    """`text` with every configured secret value replaced by a marker: a server may echo its own token back."""
    for secret in secrets:
        if len(secret) >= 6:
            text = text.replace(secret, "[REDACTED:mcp-secret]")
    return text


def _block_text(block: ContentBlock) -> str:
    match block:
        case TextContent():
            return block.text
        case ImageContent():
            return f"[image: {block.mime_type}, {_size(block.data)}; not shown]"
        case AudioContent():
            return f"[audio: {block.mime_type}, {_size(block.data)}; not shown]"
        case ResourceLink():
            about = f": {block.description}" if block.description else ""
            return f"[resource link: {block.name} <{block.uri}>{f' ({block.mime_type})' if block.mime_type else ''}]{about}"
        case EmbeddedResource():
            return _resource_text(block.resource)
        case _:
            assert_never(block)


def _resource_text(resource: TextResourceContents | BlobResourceContents) -> str:
    match resource:
        case TextResourceContents():
            return f"[resource <{resource.uri}>]\n{resource.text}"
        case BlobResourceContents():
            kind = resource.mime_type or "binary"
            return f"[resource <{resource.uri}>: {kind}, {_size(resource.blob)}; not shown]"
        case _:
            assert_never(resource)


def _size(data: str) -> str:
    """The decoded size of base64 `data`, for people: '12.3 KB'."""
    try:
        size = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        size = len(data)
    return f"{size / 1024:.1f} KB" if size >= 1024 else f"{size} bytes"
