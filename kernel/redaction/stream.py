"""Redacting a stream of texts in order, where one secret may span several: a private key logged a line per record.

Docker's json-file driver, CRI and most shippers turn each line a program prints into its own log record, so a PEM
key printed to stdout arrives as a header record, bare base64 records and a footer record. Each body record alone
looks like nothing; read in order after an unclosed header, it is key material and is masked whole.
"""

from __future__ import annotations

import re

from kernel.redaction.patterns import PEM_FOOTER, PEM_HEADER, PEM_RUN
from kernel.redaction.redactor import Redactor

PRIVATE_KEY_MARKER = "[REDACTED:private_key]"
MAX_BLOCK_TEXTS = 400
"""Texts after an unclosed header taken as its body at most (a 16384-bit RSA key is about 200 lines)."""

_HEADER = re.compile(PEM_HEADER)
_FOOTER = re.compile(PEM_FOOTER)
_LINE_BREAK = r"(?:\r?\n|\\r?\\n|[ \t]*⏎[ \t]*)"
_BODY = re.compile(rf"[\s\"',]*+{PEM_RUN}(?:{_LINE_BREAK}++{PEM_RUN})*+(?:[\s\"',]|\\r?\\n)*+")
"""A text that holds nothing but base64 lines (and line breaks or quotes around them): "served in 12ms", words
apart, is not key material."""


class StreamRedactor:
    """Redacts the consecutive texts of one stream (one file, one Loki stream, one pod's records), in order.

    Each text goes through `redactor`; after a text that opens a private key and does not close it, the texts
    that follow are its body (masked whole) up to and including the one with the footer.
    """

    __slots__ = ("_body_texts", "_redactor")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._body_texts: int | None = None
        """Body texts seen since an unclosed header; None outside a key."""

    def redact(self, text: str) -> str:
        """`text` with its secrets masked, read as the next text of the stream."""
        prefix = ""
        if self._body_texts is not None:
            footer = _FOOTER.search(text)
            if footer is not None:  # the rest of the text, after the key, is read like any other
                self._body_texts, prefix, text = None, PRIVATE_KEY_MARKER, text[footer.end() :]
            elif _BODY.fullmatch(text) and self._body_texts < MAX_BLOCK_TEXTS:
                self._body_texts += 1
                return PRIVATE_KEY_MARKER
            else:  # not key material: the block ended without its footer
                self._body_texts = None
        redacted = prefix + self._redactor.redact(text)
        self._note_unclosed_header(text)
        return redacted

    def skip(self, text: str) -> None:
        """Read `text` as the next text of the stream without producing it (a record no one will see)."""
        if self._body_texts is not None or "PRIVATE KEY" in text:
            self.redact(text)

    def _note_unclosed_header(self, text: str) -> None:
        """Open a block when the last private-key header in `text` has no footer after it."""
        if "PRIVATE KEY" in text:
            headers = list(_HEADER.finditer(text))
            if headers and _FOOTER.search(text, headers[-1].end()) is None:
                self._body_texts = 0
