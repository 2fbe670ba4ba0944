"""Words written for the model, which no person-facing surface may show: the scan behind the end-to-end suites'
check that Slack and the terminal say what happened in a person's words, never the model's hint.

Plain substring search over lower-cased text (linear time): each phrase is how a hint to the model talks
("tell the user", "call `finish`"), which a message for people never does.
"""

from __future__ import annotations

from testkit.fakes.slack_api import SlackFake

MODEL_DIRECTED = (
    "tell the user",
    "ask the user",
    "use a read-only tool",
    "call `finish`",
    "or finish.",
    "then finish",
    "call again",
    "fix the arguments",
    "expected arguments:",
    "reply with your thought",
    "finish with what you know",
    "use other evidence",
    "do not retry",
    "narrow the time window",
    "use what it already returned",
    "send the arguments as one json object",
    "if this is your final answer",
    "continue with a tool call",
    "your reply",
    "you already made",
    "your findings",
    "make the call now",
    "read it with",
    "use k8s_",
    "pass one of these",
    "pass repo as",
    "use one of these",
    "leave step out",
    "raise the step",
    "try a shorter window",
    "before calling it again",
    "use other tools",
)
"""Phrases of the kernel's and the tools' hints to the model (`StepError.hint`, `ToolFailure.hint`)."""


def model_directed(text: str) -> list[str]:
    """The phrases of `MODEL_DIRECTED` that `text` contains, in that order; [] when it speaks to people only."""
    lowered = text.lower()
    return [phrase for phrase in MODEL_DIRECTED if phrase in lowered]


def slack_leaks(fake: SlackFake, since: int = 0) -> list[str]:
    """Each request `fake` was sent (from its `since`-th on) that speaks to the model: its method, the phrases,
    and the start of what it carried."""
    return [
        f"{method}: {', '.join(found)}: {sent[:600]}"
        for method, sent in fake.sent(since)
        if (found := model_directed(sent))
    ]
