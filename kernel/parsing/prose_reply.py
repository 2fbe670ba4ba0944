"""Telling a prose answer from a glitch, for a model reply that holds no tool call.

Most models end a tool-calling conversation in prose; a reply that only announces its next action is not an end.
"""

from __future__ import annotations

import re
from enum import StrEnum


class ReplyKind(StrEnum):
    """What a reply without a call is. Only `ANSWER` may end the run; the others are format errors."""

    ANSWER = "answer"
    EMPTY = "empty"
    ANNOUNCES_ACTION = "announces_action"
    """It says what it will do next ("Let me check the logs") without doing it, or stops mid-thought."""
    TOO_SHORT = "too_short"
    """Fewer than `MIN_ANSWER_WORDS` words and no conclusion: "hmm", "still thinking"."""

    @property
    def problem(self) -> str:
        """Why the reply is not usable, in the format error's words for people ("" for an answer)."""
        return _PROBLEMS[self]

    @property
    def advice(self) -> str:
        """What the model should do about it beyond the format's reminder, for the format error's hint."""
        return "Make the call now. " if self is ReplyKind.ANNOUNCES_ACTION else ""


MIN_ANSWER_WORDS = 3
TAIL_SENTENCES = 2
"""Intent is looked for in the last sentences only: an answer may say earlier what the investigation did."""

_PROBLEMS = {
    ReplyKind.ANSWER: "",
    ReplyKind.EMPTY: "the reply was empty",
    ReplyKind.ANNOUNCES_ACTION: "it announced an action without making it",
    ReplyKind.TOO_SHORT: "it was too short to be an answer",
}
_CONCLUSION = re.compile(
    r"\b(?:root[ _-]?cause|in summary|to summari[sz]e|conclusion|final answer|confidence|caused by|"
    r"the cause (?:is|was)|recommend\w*|next steps?|ruled out)\b",
    re.IGNORECASE,
)
_INTENT = re.compile(
    r"\b(?:let me|let's|let us|i'll|i will|i am going to|i'm going to|i'm gonna|i need to|i should|i must|"
    r"i want to|i'd like to|i would like to|we need to|we should|we'll|allow me to|next,? i|now,? i|first,? i)\b"
    r"(?!\s+(?:know|be (?:happy|glad)|help)\b)",
    re.IGNORECASE,
)
_CALL_ANNOUNCED = re.compile(
    r"\b(?:call|calling|use|using|run|running|invoke|invoking|try|trying)\s+(?:the\s+)?`?[a-z][a-z0-9]*_[a-z0-9_]+`?",
    re.IGNORECASE,
)
_GERUND_START = re.compile(
    r"^(?:(?:now|next|first|then),?\s+)?(?:checking|looking|querying|searching|fetching|reading|investigating|"
    r"examining|pulling|calling|running|inspecting|gathering)\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_UNFINISHED = ("…", "...", ":")


def classify_reply(text: str) -> ReplyKind:
    """Whether a reply without a call is an answer. The rule, in order:
    1. no visible text: `EMPTY`;
    2. it ends mid-thought (":" or "…"): `ANNOUNCES_ACTION`;
    3. it states a conclusion ("root cause", "in summary", "confidence", "recommend", "next steps"…): `ANSWER`
       (a conclusion that also announces an action is still an answer; the reminder lets the model act);
    4. its last sentences announce an action: an intent phrase ("let me", "I'll", "next, I", not "let me
       know"), a snake_case tool name after "call/use/run/try", or a sentence opening with "Checking…",
       "Looking…": `ANNOUNCES_ACTION`;
    5. fewer than three words: `TOO_SHORT`;
    6. anything else: `ANSWER`."""
    stripped = text.strip()
    if not stripped:
        return ReplyKind.EMPTY
    if stripped.endswith(_UNFINISHED):
        return ReplyKind.ANNOUNCES_ACTION
    if _CONCLUSION.search(stripped):
        return ReplyKind.ANSWER
    tail = [s.strip() for s in _SENTENCES.split(stripped) if s.strip()][-TAIL_SENTENCES:]
    if any(_INTENT.search(s) or _CALL_ANNOUNCED.search(s) or _GERUND_START.search(s) for s in tail):
        return ReplyKind.ANNOUNCES_ACTION
    if len(stripped.split()) < MIN_ANSWER_WORDS:
        return ReplyKind.TOO_SHORT
    return ReplyKind.ANSWER
