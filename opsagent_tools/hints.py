"""The model's hint when a backend fails in a way only a person can fix (`ToolFailure.hint`): the words for people
say what is wrong and where it is configured; these tell the model to say so and to go on with other evidence."""

from __future__ import annotations


def tell_the_user(other_evidence: str) -> str:
    """'Tell the user, and use other evidence (metrics, logs) meanwhile.' for `other_evidence` "metrics, logs"."""
    return f"Tell the user, and use other evidence ({other_evidence}) meanwhile."
