"""Secret redaction: the redactor every outside text goes through, its patterns, and where credentials live.

The rest of the kernel (and, through `kernel`, every tool) enters by the names re-exported here.

- `redactor.py`         the `Redactor` protocol and the redactor that runs the patterns in order.
- `patterns.py`         the shipped patterns: whole PEM blocks, vendor token formats, headers, cookies, assignments.
- `secret_pattern.py`   what one pattern is: a compiled regex, the group that is the secret, its pre-check.
- `secret_lexicon.py`   where credentials live: names that hold one, key-shaped values, command flags that take one;
  `lexicon_patterns.py` the same lexicon as text patterns.
- `stream.py`           a stream of texts redacted in order, where one secret spans several (a key logged a line
  per record).
"""

from kernel.redaction.patterns import DEFAULT_PATTERNS
from kernel.redaction.redactor import DEFAULT_REDACTOR, PatternRedactor, Redactor
from kernel.redaction.secret_lexicon import masked_argv, masked_env_value
from kernel.redaction.secret_pattern import SecretPattern
from kernel.redaction.stream import StreamRedactor

__all__ = [
    "DEFAULT_PATTERNS",
    "DEFAULT_REDACTOR",
    "PatternRedactor",
    "Redactor",
    "SecretPattern",
    "StreamRedactor",
    "masked_argv",
    "masked_env_value",
]
