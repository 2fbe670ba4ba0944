"""The API's tokens: `name:token` pairs from the environment, each name a client; a header names a client only with
a whole, exact token of one; a mistake in the variable is refused saying what to fix, never showing a token."""

from __future__ import annotations

import re

import pytest

from bot.api.tokens import ApiTokens

CLAUDE, CI = "0123456789abcdef-claude", "fedcba9876543210-ci"


@pytest.fixture
def tokens() -> ApiTokens:
    return ApiTokens.parse(f" claude:{CLAUDE} , ci:{CI},", "OPSAGENT_API_TOKENS")


def test_each_token_names_its_client(tokens):
    assert tokens.names == ("claude", "ci")
    assert tokens.client(f"Bearer {CLAUDE}") == "claude"
    assert tokens.client(f"bearer {CI}") == "ci"


@pytest.mark.parametrize(
    "header",
    ["", "Bearer", f"Basic {CLAUDE}", f"Bearer {CLAUDE[:-1]}", f"Bearer {CLAUDE}x", f"Bearer {CLAUDE},{CI}", CLAUDE],
)
def test_anything_but_a_whole_token_of_one_client_names_nobody(tokens, header):
    assert tokens.client(header) is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "[api] is enabled but VAR holds no tokens"),
        ("claude", "VAR, pair 1 is not `name:token`"),
        (f"Claude:{CLAUDE}", "VAR, pair 1: the name must be 1-40 lower-case letters"),
        (f"U0ALICE:{CLAUDE}", "VAR, pair 1: the name must be 1-40 lower-case letters"),
        ("claude:short-secret", "VAR, pair 1 (claude): the token must be 16+ characters without spaces"),
        (f"claude:{CLAUDE},claude:{CI}", "VAR, pair 2: the name claude is given twice"),
        (f"claude:{CLAUDE},ci:{CLAUDE}", "VAR, pair 2 (ci): the token is another client's too"),
    ],
)
def test_a_mistake_in_the_variable_says_what_to_fix_and_shows_no_token(text, said):
    with pytest.raises(ValueError, match=f"^{re.escape(said)}") as refused:
        ApiTokens.parse(text, "VAR")
    assert CLAUDE not in str(refused.value)
    assert "short-secret" not in str(refused.value)
