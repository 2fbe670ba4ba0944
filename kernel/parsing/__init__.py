"""Reading a model's text reply: the thought, the tool calls in whatever text protocol it fell back to, or an answer.

Never raises, and prose never becomes a call. The rest of the kernel enters by the names re-exported here.

- `reply.py`         the parser: labels, blocks and code lines read into one `ParsedOutput`.
- `call_blocks.py`   where calls sit: JSON blocks, fenced or bare, and chat templates' tool-call markup;
  `call_markers.py` those markers, family by family (data only).
- `call_families.py` calls written as code on a line of their own (JS-style, Pythonic).
- `call_shapes.py`   which parsed values are calls, and what they ask for.
- `lenient_json.py`  JSON-ish values found in free text and loaded tolerantly.
- `prose_reply.py`   a reply without a call: an answer, or a glitch.
"""

from kernel.parsing.prose_reply import ReplyKind, classify_reply
from kernel.parsing.reply import ParsedOutput, parse_output

__all__ = ["ParsedOutput", "ReplyKind", "classify_reply", "parse_output"]
