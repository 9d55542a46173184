"""A plain file's own date (front matter, file name, title, a date line) over its mtime."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from knotwork.ingestion.loaders.dates import document_date
from knotwork.ingestion.loaders.files import load_files

NOW = datetime(2026, 11, 25, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "title", "text", "expected"),
    [
        ("notes.md", None, "---\ntitle: X\ndate: 2024-02-03\n---\n# X\n", datetime(2024, 2, 3)),
        ("2025-03-04-ops-review.md", "Ops review", "# Ops review\n", datetime(2025, 3, 4)),
        ("20250304_standup.txt", None, "standup", datetime(2025, 3, 4)),
        ("ops.md", "Ops review, 4 March 2025", "# Ops review, 4 March 2025\n", datetime(2025, 3, 4)),
        ("s.md", "Status update - June 2025", "x", datetime(2025, 6, 1)),
        ("u.txt", None, "Update\nLast updated: March 14th, 2024\nAlice moved.", datetime(2024, 3, 14)),
        ("u.txt", None, "Weekly sync\n10 June 2025\n\nBob joined.", datetime(2025, 6, 10)),
    ],
)
def test_the_date_a_file_says_it_was_written(
    name: str, title: str | None, text: str, expected: datetime
) -> None:
    assert document_date(name, title, text, now=NOW) == expected.replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "title", "text"),
    [
        ("atlas.md", "Atlas", "# Atlas\n\nAtlas launched on 4 March 2021 in Berlin.\n"),
        ("roadmap.md", "Roadmap 2026", "# Roadmap 2026\n"),  # a year alone is not a date
        ("plan.md", "Plan", "Date: 2031-01-01\n"),  # in the future
        ("v1.2.3-notes.md", "Release notes", "Version 3.2"),
    ],
)
def test_prose_dates_and_implausible_dates_are_not_the_document_date(
    name: str, title: str | None, text: str
) -> None:
    assert document_date(name, title, text, now=NOW) is None


def test_files_loader_dates_a_note_by_its_name_not_its_mtime(tmp_path: Path) -> None:
    note = tmp_path / "2025-06-10-update.txt"
    note.write_text("Deepak Iyer moved to the Routing team in May.\n")
    undated = tmp_path / "undated.md"
    undated.write_text("# Undated\n\nHana Sato owns Orion.\n")
    copied = datetime(2026, 11, 1, tzinfo=UTC).timestamp()
    for file in (note, undated):
        os.utime(file, (copied, copied))

    documents, _ = load_files(tmp_path)

    by_id = {d.source_id: d for d in documents}
    assert by_id["2025-06-10-update.txt"].created_at == datetime(2025, 6, 10, tzinfo=UTC)
    assert by_id["2025-06-10-update.txt"].modified_at == datetime(2025, 6, 10, tzinfo=UTC)
    assert by_id["undated.md"].created_at == datetime(2026, 11, 1, tzinfo=UTC)
