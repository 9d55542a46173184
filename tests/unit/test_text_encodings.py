"""Text files in UTF-16 (with or without a byte-order mark) and UTF-8 files with a stray NUL
byte are read as text; binary files are still skipped (issue 18)."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from knotwork.ingestion.loaders.errors import text_encoding
from knotwork.ingestion.loaders.files import load_files

TEXT = "# Notes\n\nLena Vogel runs the Help Desk. Café opens at nine.\n"


@pytest.mark.parametrize("raw", [
    codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"),
    codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"),
    TEXT.encode("utf-16-le"),
    TEXT.encode("utf-16-be"),
    codecs.BOM_UTF32_LE + TEXT.encode("utf-32-le"),
    TEXT.encode("utf-8").replace(b"Desk.", b"Desk.\x00"),
], ids=["utf16le-bom", "utf16be-bom", "utf16le", "utf16be", "utf32le-bom", "utf8-nul"])
def test_text_in_other_encodings_is_read(tmp_path: Path, raw: bytes) -> None:
    (tmp_path / "notes.md").write_bytes(raw)
    notes: list[str] = []
    documents, skipped = load_files(tmp_path, notes=notes)
    assert (skipped, notes) == (0, [])
    [document] = documents
    assert "Lena Vogel runs the Help Desk" in document.content
    assert "Café opens at nine" in document.content
    assert document.title == "Notes"


@pytest.mark.parametrize("raw", [
    bytes(range(256)) * 64,  # every byte value
    b"\x89PNG\r\n\x1a\n" + bytes(200) + b"IHDR" + bytes(range(0, 250, 7)) * 40,
    b"PK\x03\x04" + bytes(30) + b"word/document.xml" + bytes(range(128, 256)) * 20,
], ids=["all-bytes", "png-like", "zip-like"])
def test_binary_is_still_refused(raw: bytes) -> None:
    assert text_encoding(raw) is None
