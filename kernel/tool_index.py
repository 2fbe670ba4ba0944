"""Which tools a task needs first: BM25 over each tool's name, family keywords and description.

A run offers a small core of tools with their full schemas, chosen here from the task (and the data it comes
with, such as the runbooks that may apply), and lists the others in a one-line-each index the model loads
schemas from (`kernel.deferral`). Scoring reads untrusted text (an alert's labels ride in the task's data), so
words are found by one linear scan of `[a-z0-9]+` and counted: nothing here can be made slow by its input.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from kernel.tools import Tool

_WORD = re.compile(r"[a-z0-9]+")
K1 = 1.2
"""BM25's term-frequency saturation. No length normalisation (b = 0): every document is short (a name, a purpose,
its family's keywords), and normalising would rank a family's lesser tool above its main one for being shorter."""
NAME_WEIGHT = 3
KEYWORD_WEIGHT = 2
"""A word of a tool's name counts three times one of its description; a family keyword twice."""
PURPOSE_CHARS = 56
"""A tool's purpose (its index line) is the main clause of its description's first sentence, cut at a word."""
MAX_QUERY_WORDS = 256
"""Distinct words of a task (and its data) that are scored; a long alert's later words add little."""


_STOP_TEXT = (
    "a about after all also am an and any are around as at be been before being but by can could did do does for "
    "from had has have he her here how i if in into is it its just me more most my no not of on one or our out over "
    "since so some such than that the their them then there these they this those through to too under up us very "
    "was we were what when where which while who why will with would you your"
)
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Words that say nothing of which tool a task needs ("the", "through", "since")."""


def words(text: str) -> list[str]:
    """The words of `text` less stop words, lower-cased and crudely stemmed (a trailing plural `s` dropped)."""
    return [_stem(word) for word in _WORD.findall(text.lower()) if len(word) > 1 and word not in STOP_WORDS]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


class ToolIndex:
    """BM25 (b = 0) over a tool set, built once per catalogue: `scores(text)` ranks every tool for a task."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.names = tuple(tool.name for tool in tools)
        self._families = tuple(tool.family or tool.name for tool in tools)
        self._docs = [_document(tool) for tool in tools]
        frequency: Counter[str] = Counter(word for doc in self._docs for word in doc)
        count = len(self._docs)
        self._idf = {word: math.log(1 + (count - n + 0.5) / (n + 0.5)) for word, n in frequency.items()}

    def scores(self, text: str) -> list[float]:
        """Each tool's BM25 score for `text`, in the tools' order (0.0: no word in common)."""
        query = list(dict.fromkeys(words(text)))[:MAX_QUERY_WORDS]
        known = [(word, self._idf[word]) for word in query if word in self._idf]
        return [
            sum(idf * tf * (K1 + 1) / (tf + K1) for word, idf in known if (tf := doc.get(word, 0)))
            for doc in self._docs
        ]

    def best(self, text: str, among: Sequence[str], limit: int) -> list[str]:
        """Of the tools named in `among`, the `limit` that `text` matches best: the best of each family it matches
        first, best first, then the others by score; ties (and no match at all) in catalogue order."""
        wanted = set(among)
        scores = self.scores(text)
        ranked = sorted((-scores[p], p) for p in range(len(self.names)) if self.names[p] in wanted)
        seen: set[str] = set()
        first: list[int] = []
        for negative, position in ranked:
            if negative < 0 and self._families[position] not in seen:
                seen.add(self._families[position])
                first.append(position)
        rest = [position for _, position in ranked if position not in first]
        return [self.names[position] for position in [*first, *rest][:limit]]

    def matching(self, text: str, among: Sequence[str], limit: int) -> list[str]:
        """Like `best`, but only tools that share a word with `text`."""
        scores = self.scores(text)
        wanted = set(among)
        ranked = sorted((-s, p) for p, s in enumerate(scores) if s > 0 and self.names[p] in wanted)
        return [self.names[position] for _, position in ranked[:limit]]


def _document(tool: Tool) -> Counter[str]:
    doc: Counter[str] = Counter()
    for word in words(tool.name.replace("_", " ")):
        doc[word] += NAME_WEIGHT
    for keyword in tool.keywords:
        for word in words(keyword):
            doc[word] += KEYWORD_WEIGHT
    doc.update(words(purpose(tool.description)))
    return doc


def purpose(description: str) -> str:
    """What a tool is for, in a few words: the main clause of its description's first sentence (before a colon,
    a parenthesis or a semicolon), cut at a word to `PURPOSE_CHARS`. The rest of a description names other tools
    and examples ("then search_logs", "tags of checkout"), which would rank a tool for what it is not."""
    flat = " ".join(description.split())
    cuts = [at for at in (flat.find(". "), flat.find(": "), flat.find(" ("), flat.find("; ")) if at > 0]
    clause = flat[: min(cuts)] if cuts else flat.removesuffix(".")
    if len(clause) <= PURPOSE_CHARS:
        return clause
    return clause[: clause.rfind(" ", 0, PURPOSE_CHARS)].rstrip(",") + "…"
