"""The one error a loader raises: a short, human-readable message."""

from __future__ import annotations


class LoaderError(Exception):
    """A source path could not be loaded. ``str(err)`` is a one-line message for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


MAX_DOCUMENT_CHARS = 5_000_000  # Settings.max_document_chars: longer items are skipped
BINARY_PROBE_BYTES = 8192


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first bytes: not a text file (UTF-16 files are not supported)."""
    return b"\x00" in head[:BINARY_PROBE_BYTES]
