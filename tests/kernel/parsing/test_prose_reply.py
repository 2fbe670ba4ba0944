"""The classifier of replies without a call: answers end the run (after a reminder), the rest are format errors."""

from __future__ import annotations

import pytest

from bench.models import PROSE as CHAOS_PROSE_FAULT
from kernel import ReplyKind, classify_reply

CASES = [
    # empty
    ("", ReplyKind.EMPTY),
    ("  \n\t ", ReplyKind.EMPTY),
    # announced actions, in the words the issue lists and the chaos bench injects
    ("Let me check the logs", ReplyKind.ANNOUNCES_ACTION),
    ("I'll query the metrics next.", ReplyKind.ANNOUNCES_ACTION),
    ("Next, I will call search_logs", ReplyKind.ANNOUNCES_ACTION),
    ("The error rate rose at 20:14. Let's look at the deploys around then.", ReplyKind.ANNOUNCES_ACTION),
    ("Now I need to see the gateway's 504s.", ReplyKind.ANNOUNCES_ACTION),
    ("Checking the pod restarts now.", ReplyKind.ANNOUNCES_ACTION),
    ("5xx is up. Try compare_refs on v3.7.2 and v3.8.0.", ReplyKind.ANNOUNCES_ACTION),
    ("Here is what I will check next:", ReplyKind.ANNOUNCES_ACTION),
    ("Thinking…", ReplyKind.ANNOUNCES_ACTION),
    (CHAOS_PROSE_FAULT, ReplyKind.ANNOUNCES_ACTION),
    # fragments
    ("hmm", ReplyKind.TOO_SHORT),
    ("still thinking", ReplyKind.TOO_SHORT),
    # answers
    ("The pool is exhausted.", ReplyKind.ANSWER),
    ("Root cause: v3.8.0 cut the payments timeout to 200ms (step 3).", ReplyKind.ANSWER),
    ("v3.8.0 cut the timeout to 200 ms; payments p99 is 500 ms, so every call times out.", ReplyKind.ANSWER),
    ("The root cause is the v2.14.0 deploy. I'll keep watching the error rate.", ReplyKind.ANSWER),
    ("Checkout fails because of the new timeout (steps 1-3). Let me know if you need more detail.", ReplyKind.ANSWER),
    ("I could not find the cause: the logs were unreachable and the metrics are flat.", ReplyKind.ANSWER),
    ("Recommend rolling back. Let me roll it back.", ReplyKind.ANSWER),
]


@pytest.mark.parametrize(("text", "kind"), CASES, ids=[f"{k.value}:{t[:30]}" for t, k in CASES])
def test_each_reply_is_told_apart(text, kind):
    assert classify_reply(text) is kind


def test_only_an_answer_has_no_problem_to_report():
    assert ReplyKind.ANSWER.problem == ""
    assert {kind.problem for kind in ReplyKind if kind is not ReplyKind.ANSWER} == {
        "the reply was empty",
        "it announced an action without making it",
        "it was too short to be an answer",
    }


def test_intent_early_in_an_answer_does_not_count():
    text = "I'll start from what the metrics showed. 5xx rose to 31% at 20:14. The gateway logged 217 504s."
    assert classify_reply(text) is ReplyKind.ANSWER
