"""The structlog processor that masks secrets in every log line before it is rendered.

Exception texts and Slack or backend errors quote tokens and URLs with passwords; logs are read by more people than the bot's config.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from kernel import DEFAULT_REDACTOR, Redactor


class LogRedaction:
    """A structlog processor: each value of the event dict (nested ones, formatted exceptions, any object
    as its text) goes through the redactor; keys are ours and stay. Place it after `format_exc_info`."""

    def __init__(self, redactor: Redactor = DEFAULT_REDACTOR) -> None:
        self._redactor = redactor

    def __call__(self, _logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        """The event dict with every secret in its values masked."""
        for key, value in event_dict.items():
            event_dict[key] = self._value(value)
        return event_dict

    def _value(self, value: Any) -> Any:
        match value:
            case str():
                return self._redactor.redact(value)
            case bool() | int() | float() | None:
                return value
            case dict():
                return {key: self._value(item) for key, item in value.items()}
            case list() | tuple() | set() | frozenset():
                return [self._value(item) for item in value]
            case _:
                text = str(value)
                masked = self._redactor.redact(text)
                return value if masked == text else masked
