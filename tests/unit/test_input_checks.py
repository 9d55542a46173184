"""Input checks (issue 18): a Confluence page object with fields of the wrong type is skipped with
a line saying why, never dropped silently; an invalid group id is refused by every command."""

from __future__ import annotations

import json
from pathlib import Path

from knotwork.ingestion.loaders.confluence import load_confluence


def _page(page_id: object, body: object, title: object = "Runbook") -> dict[str, object]:
    return {"id": page_id, "status": "current", "title": title, "spaceId": "77",
            "version": {"number": 1, "createdAt": "2026-01-05T10:00:00Z"}, "body": body}


GOOD_BODY = {"storage": {"value": "<p>Lena Vogel runs the Help Desk.</p>",
                         "representation": "storage"}}


def test_pages_with_wrong_field_types_get_a_skip_line(tmp_path: Path) -> None:
    pages = [
        _page("1", GOOD_BODY),
        _page("2", "<p>a body given as a string</p>"),
        _page(["3"], GOOD_BODY),
        _page("4", {"storage": {"value": 42}}),
        {**_page("5", GOOD_BODY), "status": "trashed"},  # not content: skipped, no line
        "not an object",
    ]
    (tmp_path / "pages.json").write_text(json.dumps(pages), encoding="utf-8")
    (tmp_path / "empty.json").write_text(json.dumps({"results": []}), encoding="utf-8")
    notes: list[str] = []
    documents, skipped = load_confluence(tmp_path, notes=notes)
    assert [d.source_id for d in documents] == ["1"]
    assert skipped == 5
    assert len(notes) == 4, notes
    by_page = {line.split(":")[1].strip(): line for line in notes}
    assert "body is a str" in by_page["page 2 'Runbook'"]
    assert "id is a list" in by_page["page (no id) 'Runbook'"]
    assert "no text" in by_page["page 4 'Runbook'"]
    assert any(line.startswith("empty.json: no Confluence page objects") for line in notes)


def test_an_invalid_group_id_is_refused_by_every_command(tmp_path: Path) -> None:
    """``status`` (no store write) refuses a group id the stores would refuse (issue 18)."""
    from typer.testing import CliRunner

    from knotwork.services.cli import app

    runner = CliRunner()
    bad = runner.invoke(app, ["--data-dir", str(tmp_path), "--group", "no spaces!", "status"])
    assert bad.exit_code == 2
    assert "invalid group id 'no spaces!'" in bad.stderr
    assert not (tmp_path / "knotwork.db").exists()  # nothing was opened
