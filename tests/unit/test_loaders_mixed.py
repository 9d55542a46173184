"""Corpora as people hand them over: exports side by side with loose notes, nested exports,
Slack exports without channels.json, zips of documents, stray JSON among text files."""

from __future__ import annotations

import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from knotwork.domain.models import SourceSystem
from knotwork.ingestion.loaders.detect import SourceKind, detect_kind, load_path
from knotwork.ingestion.loaders.errors import LoaderError
from tests.unit.test_loaders import _page, _slack_export, _write_json


def _systems(documents: list) -> dict[SourceSystem, int]:
    counts: dict[SourceSystem, int] = {}
    for document in documents:
        counts[document.source_system] = counts.get(document.source_system, 0) + 1
    return counts


def test_exports_next_to_loose_notes_are_all_loaded(tmp_path: Path) -> None:
    _slack_export(tmp_path / "slack")
    _write_json(tmp_path / "confluence" / "pages.json", [_page("1"), _page("2")])
    (tmp_path / "README.md").write_text("# Corpus\n\nAlice Chen leads Project Atlas.\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "standup.txt").write_text("Bob Smith moved to the Payments Team.\n")

    result = load_path(tmp_path)

    assert result.kind is SourceKind.MIXED
    counts = _systems(result.documents)
    assert counts[SourceSystem.CONFLUENCE] == 2
    assert counts[SourceSystem.SLACK] == len(load_path(tmp_path / "slack").documents) > 0
    files = {d.source_id for d in result.documents if d.source_system is SourceSystem.FILE}
    assert files == {"README.md", "notes/standup.txt"}


def test_exports_nested_one_folder_down_are_all_loaded(tmp_path: Path) -> None:
    company = tmp_path / "acme"
    _slack_export(company / "slack-export")
    _write_json(company / "wiki" / "users.json", [{"accountId": "acc-1", "displayName": "Ada Park"}])
    _write_json(company / "wiki" / "space" / "p.json", _page("9"))

    result = load_path(tmp_path)

    counts = _systems(result.documents)
    assert counts[SourceSystem.CONFLUENCE] == 1 and counts[SourceSystem.SLACK] > 0
    page = next(d for d in result.documents if d.source_system is SourceSystem.CONFLUENCE)
    assert page.author == "Ada Park"  # the users.json beside the pages names the author


def test_slack_export_without_channels_json(tmp_path: Path) -> None:
    export = tmp_path / "export"
    _write_json(export / "users.json", [{"id": "U1", "real_name": "Alice Chen",
                                          "profile": {"email": "alice@acme.com"}}])
    _write_json(export / "groups.json", [{"id": "G1", "name": "leads", "members": ["U1"]}])
    _write_json(export / "dms.json", [{"id": "D1", "members": ["U1", "U2"]}])
    message = {"type": "message", "user": "U1", "text": "Atlas ships Friday.",
               "ts": "1709286000.000100"}
    _write_json(export / "leads" / "2024-03-01.json", [message])
    _write_json(export / "D1" / "2024-03-01.json", [dict(message, text="Call me later.")])

    assert detect_kind(tmp_path) is SourceKind.SLACK
    documents = load_path(tmp_path).documents

    by_channel = {d.metadata["channel"]: d for d in documents}
    assert set(by_channel) == {"leads", "D1"}
    assert by_channel["leads"].content == "Alice Chen: Atlas ships Friday."
    assert "user:alice@acme.com" in by_channel["leads"].acl  # private: members only
    assert "user:U2" in by_channel["D1"].acl


def test_zip_of_documents_is_unpacked_with_its_file_times(tmp_path: Path) -> None:
    archive = tmp_path / "handover.zip"
    with zipfile.ZipFile(archive, "w") as out:
        info = zipfile.ZipInfo("docs/atlas.md", date_time=(2023, 5, 17, 9, 30, 0))
        out.writestr(info, "# Atlas\n\nPriya Raman leads Project Atlas.\n")
        out.writestr("docs/guide.rst", "Guide\n=====\n\nThe Billing Service uses Kafka.\n")

    result = load_path(archive)

    by_id = {d.source_id: d for d in result.documents}
    assert set(by_id) == {"docs/atlas.md", "docs/guide.rst"}
    assert by_id["docs/atlas.md"].title == "Atlas"
    assert by_id["docs/atlas.md"].created_at.astimezone(UTC).year == 2023
    assert by_id["docs/atlas.md"].created_at < datetime(2024, 1, 1, tzinfo=UTC)
    assert "Kafka" in by_id["docs/guide.rst"].content


def test_stray_malformed_json_among_text_files_does_not_block_them(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{not json")
    (tmp_path / "a.md").write_text("# A\n\nAlice Chen works at Acme.\n")

    result = load_path(tmp_path)

    assert result.kind is SourceKind.FILES
    assert [d.source_id for d in result.documents] == ["a.md"]


def test_malformed_json_in_a_mixed_corpus_is_reported_and_skipped(tmp_path: Path) -> None:
    _write_json(tmp_path / "wiki" / "p.json", _page("4"))
    (tmp_path / "wiki" / "broken.json").write_text('{"id": ')
    (tmp_path / "a.md").write_text("# A\n\nAlice Chen works at Acme.\n")

    result = load_path(tmp_path)

    assert result.kind is SourceKind.MIXED
    assert {d.source_id for d in result.documents} == {"4", "a.md"}
    assert any("broken.json" in note for note in result.notes)


def test_confluence_pages_exported_with_a_view_body(tmp_path: Path) -> None:
    page = _page("5", body={"view": {"value": "<p>Lee Wong leads Atlas.</p>",
                                     "representation": "view"}})
    _write_json(tmp_path / "p.json", page)

    (document,) = load_path(tmp_path).documents

    assert document.content == "# Page 5\n\nLee Wong leads Atlas."


def test_a_page_title_heads_its_text_once(tmp_path: Path) -> None:
    body = "<h1>Q1 Risk Register</h1><p>Risk: capacity.</p>"
    _write_json(tmp_path / "a.json", _page("6", title="Q1 Risk Register",
                                            body={"storage": {"value": body}}))
    _write_json(tmp_path / "b.json", _page("7", title="Notifications Hub",
                                            body={"storage": {"value": "<p>Owner: Messaging</p>"}}))

    pages = {d.source_id: d.content for d in load_path(tmp_path).documents}

    assert pages["6"].count("Q1 Risk Register") == 1
    assert pages["7"] == "# Notifications Hub\n\nOwner: Messaging"


def test_plain_text_handles_read_as_the_people(tmp_path: Path) -> None:
    from knotwork.ingestion.loaders.slack import render_slack_text, user_names

    users = user_names([
        {"id": "U1", "name": "amara", "profile": {"real_name": "Amara Okafor",
                                                  "display_name": "amara.o"}},
        {"id": "U2", "name": "sam", "real_name": "Sam Ito"},
        {"id": "U3", "name": "sam.b", "real_name": "Sam Berg", "profile": {"display_name": "sam"}},
    ])
    text = render_slack_text("@amara.o owns it now. cc @amara, @sam, @here; mail a@b.com", users)
    assert text == "Amara Okafor owns it now. cc Amara Okafor, @sam, @here; mail a@b.com"
    assert users["U1"] == "Amara Okafor"  # ids still name people


def test_a_zip_that_unpacks_over_the_limit_is_refused_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knotwork.ingestion.loaders import detect

    archive = tmp_path / "big.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("notes/a.md", "# A\n\n" + "Alice Chen leads Atlas. " * 200)
    monkeypatch.setattr(detect, "_MAX_UNPACKED_BYTES", 1000)

    with pytest.raises(LoaderError, match=r"big\.zip unpacks to [\d,]+ bytes, over the 1,000") as err:
        load_path(archive)
    assert "\n" not in str(err.value)
