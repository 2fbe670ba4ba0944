"""Slack's verdict on a message's Block Kit `blocks`, as the fake Web API gives it: the documented limits, then
`slack_sdk`'s own models; the errors read like Slack's (`must be less than 3001 characters [json-pointer:…]`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

# Slack's limits: https://docs.slack.dev/reference/block-kit/blocks and the element pages.
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3_000
MAX_SECTION_FIELDS = 10
MAX_SECTION_FIELD_TEXT = 2_000
MAX_HEADER_TEXT = 150
MAX_MARKDOWN_TEXT = 12_000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2_000
MAX_BUTTON_URL = 3_000
MAX_ID = 255
MAX_ACTIONS_ELEMENTS = 25
MAX_CONTEXT_ELEMENTS = 10
MAX_CONTEXT_ACTIONS_ELEMENTS = 5
MAX_CONFIRM_TITLE = 100
MAX_CONFIRM_TEXT = 300
MAX_CONFIRM_LABEL = 30


def _text(value: Any) -> str | None:
    """The string inside a text object (or a bare string); None when there is none."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return value["text"]
    return None


def _too_long(value: str | None, limit: int, pointer: str) -> list[str]:
    if value is not None and len(value) > limit:
        return [f"must be less than {limit + 1} characters [json-pointer:{pointer}]"]
    return []


def _confirm_errors(confirm: Any, pointer: str) -> list[str]:
    if not isinstance(confirm, Mapping):
        return []
    errors: list[str] = []
    errors += _too_long(_text(confirm.get("title")), MAX_CONFIRM_TITLE, f"{pointer}/title/text")
    errors += _too_long(_text(confirm.get("text")), MAX_CONFIRM_TEXT, f"{pointer}/text/text")
    for label in ("confirm", "deny"):
        errors += _too_long(_text(confirm.get(label)), MAX_CONFIRM_LABEL, f"{pointer}/{label}/text")
    return errors


def _element_errors(element: Any, pointer: str) -> list[str]:
    if not isinstance(element, Mapping):
        return [f"expected an object [json-pointer:{pointer}]"]
    errors: list[str] = []
    errors += _too_long(element.get("action_id"), MAX_ID, f"{pointer}/action_id")
    if element.get("type") == "button":
        errors += _too_long(_text(element.get("text")), MAX_BUTTON_TEXT, f"{pointer}/text/text")
        errors += _too_long(element.get("value"), MAX_BUTTON_VALUE, f"{pointer}/value")
        errors += _too_long(element.get("url"), MAX_BUTTON_URL, f"{pointer}/url")
    if "confirm" in element:
        errors += _confirm_errors(element["confirm"], f"{pointer}/confirm")
    return errors


def _elements_errors(block: Mapping[str, Any], limit: int, pointer: str) -> list[str]:
    elements = block.get("elements")
    if not isinstance(elements, list):
        return [f"expected an array [json-pointer:{pointer}/elements]"]
    if len(elements) > limit:
        return [f"no more than {limit} items allowed [json-pointer:{pointer}/elements]"]
    errors: list[str] = []
    seen: set[str] = set()
    for j, element in enumerate(elements):
        errors += _element_errors(element, f"{pointer}/elements/{j}") if block["type"] != "context" else []
        action_id = element.get("action_id") if isinstance(element, Mapping) else None
        if action_id is not None:
            if action_id in seen:
                errors.append(
                    f"action_id must be unique in a block: {action_id} [json-pointer:{pointer}/elements/{j}/action_id]"
                )
            seen.add(action_id)
    return errors


def _block_errors(block: Mapping[str, Any], pointer: str) -> list[str]:
    kind = block["type"]
    errors: list[str] = []
    if kind == "section":
        text, fields = block.get("text"), block.get("fields")
        if text is None and not fields:
            errors.append(f"must define either `text` or `fields` [json-pointer:{pointer}/type]")
        body = _text(text)
        if body is not None and not body:
            errors.append(f"must be more than 0 characters [json-pointer:{pointer}/text/text]")
        errors += _too_long(body, MAX_SECTION_TEXT, f"{pointer}/text/text")
        if isinstance(fields, list):
            if len(fields) > MAX_SECTION_FIELDS:
                errors.append(f"no more than {MAX_SECTION_FIELDS} items allowed [json-pointer:{pointer}/fields]")
            for j, item in enumerate(fields):
                errors += _too_long(_text(item), MAX_SECTION_FIELD_TEXT, f"{pointer}/fields/{j}/text")
        if "accessory" in block:
            errors += _element_errors(block["accessory"], f"{pointer}/accessory")
    elif kind == "header":
        body = _text(block.get("text"))
        if body is not None and len(body) > MAX_HEADER_TEXT:
            errors.append(f"must be no longer than {MAX_HEADER_TEXT} characters [json-pointer:{pointer}/text/text]")
    elif kind == "markdown":
        errors += _too_long(block.get("text"), MAX_MARKDOWN_TEXT, f"{pointer}/text")
    elif kind == "actions":
        errors += _elements_errors(block, MAX_ACTIONS_ELEMENTS, pointer)
    elif kind == "context":
        errors += _elements_errors(block, MAX_CONTEXT_ELEMENTS, pointer)
    elif kind == "context_actions":
        errors += _elements_errors(block, MAX_CONTEXT_ACTIONS_ELEMENTS, pointer)
    return errors


def check_blocks(blocks: Any) -> tuple[str, list[str]] | None:
    """Slack's verdict on a message's `blocks`: None when they are accepted, else `(error, messages)`.

    The messages look like Slack's: `must be less than 3001 characters [json-pointer:/blocks/0/text/text]`.
    Checks the documented limits first, then asks `slack_sdk`'s own models (`Block.parse(...).validate_json()`).
    """
    if not isinstance(blocks, list):
        return "invalid_blocks_format", ["blocks must be a JSON array [json-pointer:/blocks]"]
    if len(blocks) > MAX_BLOCKS:
        return "invalid_blocks", [f"no more than {MAX_BLOCKS} items allowed [json-pointer:/blocks]"]
    errors: list[str] = []
    block_ids: set[str] = set()
    markdown_total = 0
    for i, block in enumerate(blocks):
        pointer = f"/blocks/{i}"
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            errors.append(f"missing required field: type [json-pointer:{pointer}]")
            continue
        block_id = block.get("block_id")
        if block_id is not None:
            errors += _too_long(block_id, MAX_ID, f"{pointer}/block_id")
            if block_id in block_ids:
                errors.append(f"duplicate block_id: {block_id} [json-pointer:{pointer}/block_id]")
            block_ids.add(block_id)
        if block["type"] == "markdown" and isinstance(block.get("text"), str):
            markdown_total += len(block["text"])
        own = _block_errors(block, pointer)
        if not own:
            own = _sdk_block_errors(block, pointer)
        errors += own
    if errors:
        return "invalid_blocks", errors
    if markdown_total > MAX_MARKDOWN_TEXT:
        return "msg_blocks_too_long", []
    return None


def _sdk_block_errors(block: Mapping[str, Any], pointer: str) -> list[str]:
    try:
        parsed = Block.parse(dict(block))
        if parsed is None:
            return [f"unsupported type: {block['type']} [json-pointer:{pointer}/type]"]
        parsed.validate_json()
    except (SlackObjectFormationError, TypeError, ValueError, KeyError, AttributeError) as exc:
        return [f"{exc} [json-pointer:{pointer}]"]
    return []
