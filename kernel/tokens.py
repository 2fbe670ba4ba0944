"""Token estimates for when the model endpoint reports no usage.

CJK text runs about one token per character, other text about four characters per token.
"""

from __future__ import annotations

import re

_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u3040-\u30ff\uff00-\uffef]")

CHARS_PER_TOKEN = 4
"""Average characters per token for Latin-script text and code (OpenAI's rule of thumb)."""


def estimate_tokens(text: str) -> int:
    """Estimate the tokens in `text`: CJK characters count one each, the rest four to a token."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text)) if not text.isascii() else 0
    return cjk + -(-(len(text) - cjk) // CHARS_PER_TOKEN)
