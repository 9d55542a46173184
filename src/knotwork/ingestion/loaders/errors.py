"""The one error a loader raises: a short, human-readable message."""

from __future__ import annotations

import codecs


class LoaderError(Exception):
    """A source path could not be loaded. ``str(err)`` is a one-line message for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


MAX_DOCUMENT_CHARS = 5_000_000  # Settings.max_document_chars: longer items are skipped
BINARY_PROBE_BYTES = 8192


# byte-order marks, longest first (a UTF-32 LE mark starts with the UTF-16 LE one)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_MOSTLY = 0.9  # share of the bytes at one parity that are NUL in UTF-16 text without a mark
_CONTROL_SHARE = 0.01  # control characters (NUL included) tolerated in UTF-8 text


def text_encoding(head: bytes) -> str | None:
    """How to decode a file starting with ``head``, or None when it is not text.

    A byte-order mark names the encoding; NUL bytes at every other position are UTF-16
    without one; otherwise text is UTF-8 (or Latin-1, see the loaders) in which control
    characters are rare, so a stray NUL byte does not make a text file binary."""
    head = head[:BINARY_PROBE_BYTES]
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    if b"\x00" not in head:
        return "utf-8-sig"
    even, odd = head[0::2], head[1::2]
    if len(odd) >= 2:
        if odd.count(0) >= _MOSTLY * len(odd) and even.count(0) <= (1 - _MOSTLY) * len(even):
            return "utf-16-le"
        if even.count(0) >= _MOSTLY * len(even) and odd.count(0) <= (1 - _MOSTLY) * len(odd):
            return "utf-16-be"
    try:  # the probe may end inside a character: not final
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return None
    controls = sum(1 for c in text if ord(c) < 32 and c not in "\t\n\r\f\v")
    return "utf-8" if controls <= max(1, int(_CONTROL_SHARE * len(text))) else None


def looks_binary(head: bytes) -> bool:
    """Not a text file in any encoding ``text_encoding`` recognises."""
    return text_encoding(head) is None
