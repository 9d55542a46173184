"""Source loaders: XHTML conversion, Confluence, Slack, plain files, detection, errors."""

from __future__ import annotations

import json
import os
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import knotwork
from knotwork.domain.models import EpisodeSource, RawDocument, SourceSystem
from knotwork.ingestion.loaders.confluence import load_confluence
from knotwork.ingestion.loaders.detect import LoadResult, SourceKind, detect_kind, load_path
from knotwork.ingestion.loaders.errors import LoaderError
from knotwork.ingestion.loaders.files import load_files, markdown_title
from knotwork.ingestion.loaders.slack import load_slack, render_slack_text
from knotwork.ingestion.loaders.xhtml import convert_html, html_to_text

SAMPLE = Path(knotwork.__file__).parent / "sample_data"


def _write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _by_id(documents: list[RawDocument]) -> dict[str, RawDocument]:
    return {document.source_id: document for document in documents}


# --------------------------------------------------------------------------- XHTML


def test_table_with_header_row_becomes_readable_lines() -> None:
    markup = (
        "<table><tbody><tr><th><p>Name</p></th><th>Role</th><th>Team</th></tr>"
        "<tr><td><p>Priya Raman</p></td><td>Engineering Manager</td><td>Atlas</td></tr>"
        "<tr><td>Bob Smith</td><td></td><td>Platform</td></tr></tbody></table>"
    )
    assert html_to_text(markup) == (
        "Name: Priya Raman; Role: Engineering Manager; Team: Atlas\nName: Bob Smith; Team: Platform"
    )


def test_table_with_thead_and_without_header() -> None:
    with_thead = (
        "<table><thead><tr><td>Service</td><td>Owner</td></tr></thead>"
        "<tbody><tr><td>Billing</td><td>Platform Team</td></tr></tbody></table>"
    )
    assert html_to_text(with_thead) == "Service: Billing; Owner: Platform Team"
    plain = "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>"
    assert html_to_text(plain) == "a; b\nc; d"


def test_headings_paragraphs_and_lists_keep_structure() -> None:
    markup = (
        "<h1>Title</h1><p>First <strong>para</strong>graph.</p><p>Line one<br/>line two</p>"
        "<h2>Items</h2><ul><li><p>One</p></li><li>Two<ol><li>Two.a</li></ol></li></ul>"
        "<p>After &amp; done &lt;ok&gt;&nbsp;&mdash; end</p>"
    )
    assert html_to_text(markup) == (
        "# Title\n\nFirst paragraph.\n\nLine one\nline two\n\n## Items\n\n"
        "- One\n- Two\n  - Two.a\n\nAfter & done <ok> \u2014 end"
    )


def test_macros_kept_or_dropped() -> None:
    markup = (
        '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">python</ac:parameter>'
        "<ac:plain-text-body><![CDATA[if a < b:\n    run()]]></ac:plain-text-body>"
        "</ac:structured-macro>"
        '<ac:structured-macro ac:name="info"><ac:rich-text-body><p>Info body.</p>'
        "</ac:rich-text-body></ac:structured-macro>"
        '<ac:structured-macro ac:name="note"><ac:rich-text-body><p>Note body.</p>'
        "</ac:rich-text-body></ac:structured-macro>"
        '<ac:structured-macro ac:name="panel"><ac:parameter ac:name="title">Panel title</ac:parameter>'
        "<ac:rich-text-body><p>Panel body.</p></ac:rich-text-body></ac:structured-macro>"
        '<ac:structured-macro ac:name="toc"><ac:parameter ac:name="maxLevel">2</ac:parameter>'
        "</ac:structured-macro>"
        '<ac:structured-macro ac:name="jira"><ac:parameter ac:name="key">ATL-1</ac:parameter>'
        "</ac:structured-macro>"
    )
    text = html_to_text(markup)
    assert "if a < b:\n    run()" in text
    for kept in ("Info body.", "Note body.", "Panel title", "Panel body."):
        assert kept in text
    assert "maxLevel" not in text and "ATL-1" not in text and "python" not in text


def test_links_users_pages_and_emoticons() -> None:
    markup = (
        '<p>Ask <ac:link><ri:user ri:account-id="acc-1" /></ac:link> or '
        '<ac:link><ri:user ri:account-id="acc-2" /></ac:link>, see '
        '<ac:link><ri:page ri:content-title="Decision Log" /></ac:link> and '
        '<a href="https://example.com/x">the wiki</a> <ac:emoticon ac:name="smile" /></p>'
    )
    assert html_to_text(markup, {"acc-1": "Priya Raman"}) == (
        "Ask Priya Raman or acc-2, see Decision Log and the wiki"
    )
    body = (
        '<ac:link><ri:page ri:content-title="X" /><ac:plain-text-link-body>'
        "<![CDATA[custom label]]></ac:plain-text-link-body></ac:link>"
    )
    assert html_to_text(body) == "custom label"


def test_html_document_title_and_invisible_text() -> None:
    converted = convert_html(
        "<html><head><title>Runbook</title><style>p{}</style></head><body>"
        "<script>var x = 1;</script><h1>Billing runbook</h1><p>Restart<p>Check</body></html>"
    )
    assert converted.title == "Runbook"
    assert converted.text == "# Billing runbook\n\nRestart\n\nCheck"


# ---------------------------------------------------------------------- Confluence


def test_confluence_sample_pages() -> None:
    documents, skipped = load_confluence(SAMPLE / "confluence")
    pages = _by_id(documents)
    assert sorted(pages) == ["393217", "393218", "393219", "393220", "393221"]
    assert skipped == 1  # the trashed draft
    assert all("April 15" not in document.content for document in documents)
    directory = pages["393218"]
    assert directory.source_system is SourceSystem.CONFLUENCE
    assert directory.title == "Engineering Team Directory"
    assert directory.author == "Lena Fischer"
    assert directory.url == (
        "https://northwind-robotics.atlassian.net/wiki/spaces/ENG/pages/393218/"
        "Engineering+Team+Directory"
    )
    assert directory.created_at == datetime(2024, 9, 3, 9, 0, tzinfo=UTC)
    assert directory.modified_at == datetime(2025, 2, 17, 14, 20, tzinfo=UTC)
    assert directory.metadata == {
        "space_id": "98304",
        "parent_id": "393217",
        "version": "9",
        "created_by": "Lena Fischer",
    }
    assert "Name: Priya Raman; Role: Engineering Manager; Team: Atlas Team" in directory.content
    assert "- Priya Raman reports to Marcus Webb." in directory.content
    assert "Page owner: Lena Fischer." in directory.content
    atlas = pages["393219"].content
    assert "The Atlas launch is scheduled for June 3, 2025." in atlas
    assert "partitions: 48" in atlas  # code macro body
    decisions = pages["393220"]
    assert decisions.author == "Daniel Okafor"  # last editor (version.authorId)
    assert "Owner: Daniel Okafor; Status: Decided" in decisions.content


def _page(page_id: str, **overrides: Any) -> dict[str, Any]:
    page: dict[str, Any] = {
        "id": page_id,
        "status": "current",
        "title": f"Page {page_id}",
        "spaceId": "1",
        "parentId": None,
        "authorId": "acc-1",
        "createdAt": "2024-03-01T10:00:00.000Z",
        "version": {"number": 1, "createdAt": "2024-03-02T10:00:00.000Z"},
        "body": {"storage": {"value": f"<p>Body of {page_id}</p>", "representation": "storage"}},
        "_links": {"webui": f"/spaces/S/pages/{page_id}"},
    }
    page.update(overrides)
    return page


def test_confluence_file_shapes_status_and_users(tmp_path: Path) -> None:
    _write_json(tmp_path / "users.json", [{"accountId": "acc-1", "displayName": "Ada Park"}])
    _write_json(tmp_path / "single.json", _page("1"))
    _write_json(tmp_path / "list.json", [_page("2"), _page("3", status="archived")])
    _write_json(
        tmp_path / "sub" / "paged.json",
        {
            "results": [_page("4"), _page("5", status="trashed"), _page("6", status="deleted")],
            "_links": {"next": "/wiki/api/v2/pages?cursor=x", "base": "https://acme.example/wiki"},
        },
    )
    _write_json(tmp_path / "dupe.json", _page("2", version={"number": 3}, title="Newer"))
    documents, skipped = load_confluence(tmp_path)
    pages = _by_id(documents)
    assert sorted(pages) == ["1", "2", "4"]
    assert skipped == 4  # archived, trashed, deleted, older duplicate
    assert pages["1"].author == "Ada Park"  # authorId fallback, mapped
    assert pages["1"].url == "/spaces/S/pages/1"
    assert pages["1"].content == "# Page 1\n\nBody of 1"  # the title heads the text
    assert pages["2"].title == "Newer"
    assert pages["4"].url == "https://acme.example/wiki/spaces/S/pages/4"
    assert pages["1"].modified_at == datetime(2024, 3, 2, 10, tzinfo=UTC)
    assert "parent_id" not in pages["1"].metadata


# --------------------------------------------------------------------------- Slack


def test_slack_sample_export() -> None:
    documents, skipped = load_slack(SAMPLE / "slack")
    by_id = _by_id(documents)
    thread = by_id["eng-platform/1740996120.000200"]
    assert thread.source_system is SourceSystem.SLACK
    assert thread.episode_source is EpisodeSource.MESSAGE
    assert thread.url is None
    assert thread.author == "Sofia Lindqvist"
    assert thread.title == "#eng-platform \u2014 Sofia Lindqvist, 2025-03-03 10:02 UTC"
    lines = thread.content.splitlines()
    assert lines[0] == (
        "Sofia Lindqvist: I'm taking over the on-call rotation for the Billing Service from "
        "Daniel Okafor starting March 10."
    )
    assert lines[2].startswith("Marcus Webb: Approved.")  # reply from the next day's file
    assert "& Daniel Okafor is secondary" in lines[2]
    assert thread.created_at == datetime.fromtimestamp(1740996120.0002, UTC)
    assert thread.modified_at is not None and thread.modified_at.date().isoformat() == "2025-03-04"
    assert thread.metadata["channel"] == "eng-platform"
    assert thread.metadata["channel_id"] == "C05PLATFRM"
    assert thread.metadata["thread_ts"] == thread.metadata["ts"] == "1740996120.000200"
    atlas = by_id["project-atlas/1741180500.000500"]
    assert "Alice Chen: Heads up: Priya Raman moved the Atlas launch to June 10, 2025" in (
        atlas.content
    )
    assert "#eng-platform" in atlas.content
    everything = "\n".join(document.content for document in documents)
    for noise in ("has joined", "has left", "timesheets", "build #512", "deleted", "topic"):
        assert noise not in everything
    assert "Jenkins will be shut down on March 31, 2025." in everything  # edited message
    assert skipped == 6
    assert len(documents) == 9


def test_render_slack_text() -> None:
    users = {"U1": "Alice Chen", "U2": "Bob Smith"}
    text = (
        "<@U2> ping <@U9> in <#C1|general> and <#C2>: <https://x.example/a|the doc>, "
        "<https://x.example/b> &amp; a &lt;b&gt; <!here>"
    )
    assert render_slack_text(text, users, {"C2": "random"}) == (
        "Bob Smith ping U9 in #general and #random: the doc, https://x.example/b & a <b> @here"
    )


def _slack_export(root: Path) -> Path:
    _write_json(root / "channels.json", [{"id": "C1", "name": "eng"}, {"id": "C2", "name": "ops"}])
    _write_json(
        root / "users.json",
        [
            {"id": "U1", "name": "alice", "real_name": "Alice Chen"},
            {"id": "U2", "name": "bob", "profile": {"real_name": "Bob Smith"}},
        ],
    )
    _write_json(
        root / "eng" / "2024-03-01.json",
        [
            {
                "type": "message",
                "user": "U1",
                "text": "<@U1> has joined the channel",
                "subtype": "channel_join",
                "ts": "1709286000.000100",
            },
            {
                "type": "message",
                "user": "U1",
                "text": "Deploy plan? cc <@U2>",
                "ts": "1709286120.000200",
                "thread_ts": "1709286120.000200",
                "reply_count": 2,
                "replies": [{"user": "U2", "ts": "1709290000.000300"}],
            },
            {
                "type": "message",
                "user": "U2",
                "text": "Tuesday.",
                "ts": "1709290000.000300",
                "thread_ts": "1709286120.000200",
            },
            {
                "type": "message",
                "subtype": "bot_message",
                "bot_id": "B1",
                "text": "CI passed",
                "ts": "1709290100.000000",
            },
            {
                "type": "message",
                "bot_id": "B2",
                "user": "U3",
                "text": "App says hi",
                "ts": "1709290150.000000",
            },
            {
                "type": "message",
                "user": "U2",
                "text": "fixed typo now",
                "edited": {"user": "U2", "ts": "1709290300.000000"},
                "ts": "1709290200.000000",
            },
            {
                "type": "message",
                "user": "U1",
                "text": "This message was deleted.",
                "ts": "1709290250.000000",
            },
            {
                "type": "message",
                "subtype": "tombstone",
                "user": "USLACKBOT",
                "text": "gone",
                "ts": "1709290260.000000",
            },
            {
                "type": "message",
                "subtype": "channel_purpose",
                "user": "U1",
                "text": "set purpose",
                "ts": "1709290270.000000",
            },
        ],
    )
    _write_json(
        root / "eng" / "2024-03-02.json",
        [
            {
                "type": "message",
                "user": "U1",
                "text": "Moved to Wednesday.",
                "ts": "1709370000.000400",
                "thread_ts": "1709286120.000200",
            }
        ],
    )
    _write_json(
        root / "ops" / "2024-03-02.json",
        [{"type": "message", "user": "U9", "text": "who am I", "ts": "1709370100.000000"}],
    )
    return root


def test_slack_threads_noise_and_edits(tmp_path: Path) -> None:
    documents, skipped = load_slack(_slack_export(tmp_path / "export"))
    by_id = _by_id(documents)
    assert sorted(by_id) == [
        "eng/1709286120.000200",
        "eng/1709290200.000000",
        "ops/1709370100.000000",
    ]
    assert skipped == 6  # join, bot_message, bot_id, deleted text, tombstone, purpose
    thread = by_id["eng/1709286120.000200"]
    assert thread.content == (
        "Alice Chen: Deploy plan? cc Bob Smith\nBob Smith: Tuesday.\nAlice Chen: Moved to Wednesday."
    )
    assert thread.title == "#eng \u2014 Alice Chen, 2024-03-01 09:42 UTC"
    assert thread.modified_at == datetime.fromtimestamp(1709370000.0004, UTC)
    assert thread.metadata == {
        "channel": "eng",
        "channel_id": "C1",
        "ts": "1709286120.000200",
        "thread_ts": "1709286120.000200",
        "message_count": "3",
    }
    assert by_id["eng/1709290200.000000"].content == "Bob Smith: fixed typo now"
    assert by_id["ops/1709370100.000000"].author == "U9"  # unknown user falls back to the id


def _zip_dir(source: Path, target: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for file in sorted(source.rglob("*")):
            if file.is_file():
                archive.write(file, prefix + file.relative_to(source).as_posix())
    return target


@pytest.mark.parametrize("prefix", ["", "Acme Slack export/"])
def test_slack_zip_export(tmp_path: Path, prefix: str) -> None:
    export = _zip_dir(_slack_export(tmp_path / "export"), tmp_path / "export.zip", prefix)
    result = load_path(export)
    assert result.kind is SourceKind.SLACK
    assert "eng/1709286120.000200" in _by_id(result.documents)
    assert result.documents == load_slack(tmp_path / "export")[0]


# --------------------------------------------------------------------------- files


def test_files_loader(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("intro\n\n## Setup Guide\n\nRun it.\n")
    (tmp_path / "notes.txt").write_text("plain notes")
    (tmp_path / "page.html").write_text(
        "<html><head><title>Runbook</title></head><body><ul><li>a</li><li>b</li></ul></body></html>"
    )
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "data.json").write_text("{}")
    (tmp_path / "empty.md").write_text("  \n")
    (tmp_path / ".hidden.md").write_text("# secret")
    os.utime(tmp_path / "notes.txt", (1709286120, 1709286120))
    documents, skipped = load_files(tmp_path)
    by_id = _by_id(documents)
    assert sorted(by_id) == ["docs/guide.md", "notes.txt", "page.html"]
    assert skipped == 3
    assert by_id["docs/guide.md"].title == "Setup Guide"
    assert by_id["docs/guide.md"].content == "intro\n\n## Setup Guide\n\nRun it."
    assert by_id["notes.txt"].title == "notes"
    assert by_id["notes.txt"].modified_at == datetime.fromtimestamp(1709286120, UTC)
    assert by_id["notes.txt"].created_at == by_id["notes.txt"].modified_at
    assert by_id["page.html"].title == "Runbook"
    assert by_id["page.html"].content == "- a\n- b"
    assert all(document.source_system is SourceSystem.FILE for document in documents)


def test_markdown_title_variants() -> None:
    assert markdown_title("```\n# not a title\n```\nTitle\n=====\n") == "Title"
    assert markdown_title("---\ntitle: Front Matter\n---\n# Heading\n") == "Front Matter"
    assert markdown_title("no heading here") is None


# ------------------------------------------------------------------------ detection


def test_detect_each_kind(tmp_path: Path) -> None:
    assert detect_kind(SAMPLE / "confluence") is SourceKind.CONFLUENCE
    assert detect_kind(SAMPLE / "slack") is SourceKind.SLACK
    nested = _slack_export(tmp_path / "outer" / "export")
    assert detect_kind(nested.parent) is SourceKind.SLACK
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\ntext")
    assert detect_kind(docs) is SourceKind.FILES
    assert detect_kind(docs / "a.md") is SourceKind.FILES
    single_page = _write_json(tmp_path / "page.json", _page("7"))
    result = load_path(single_page)
    assert isinstance(result, LoadResult)
    assert result.kind is SourceKind.CONFLUENCE and result.documents[0].source_id == "7"
    assert load_path(docs).documents[0].title == "A"


def test_load_path_sample_counts() -> None:
    confluence = load_path(SAMPLE / "confluence")
    slack = load_path(SAMPLE / "slack")
    assert (confluence.kind, len(confluence.documents), confluence.skipped) == (
        SourceKind.CONFLUENCE,
        5,
        1,
    )
    assert (slack.kind, len(slack.documents)) == (SourceKind.SLACK, 9)


def test_error_nonexistent_path(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="does not exist"):
        load_path(tmp_path / "missing")


def test_error_corrupt_zip(tmp_path: Path) -> None:
    broken = tmp_path / "export.zip"
    broken.write_bytes(b"PK\x03\x04 definitely not a zip")
    with pytest.raises(LoaderError, match="zip"):
        load_path(broken)


def test_error_malformed_json_names_file(tmp_path: Path) -> None:
    _write_json(tmp_path / "good.json", _page("1"))
    (tmp_path / "bad-page.json").write_text('{"id": "2", "title": ')
    with pytest.raises(LoaderError, match="bad-page.json") as caught:
        load_path(tmp_path)
    assert "\n" not in str(caught.value)
    export = _slack_export(tmp_path / "export")
    (export / "eng" / "2024-03-03.json").write_text("[{oops")
    with pytest.raises(LoaderError, match=r"malformed JSON in eng/2024-03-03\.json"):
        load_path(export)


def test_error_nothing_ingestible(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="nothing ingestible"):
        load_path(tmp_path)
    (tmp_path / "scan.pdf").write_bytes(b"%PDF")
    with pytest.raises(LoaderError, match="nothing ingestible"):
        load_path(tmp_path)
    with pytest.raises(LoaderError, match="unsupported file type"):
        load_path(tmp_path / "scan.pdf")


def test_key_value_tables_read_as_labelled_lines() -> None:
    # a "Field | Value" header names no column: each row is a labelled value
    field_value = (
        "<table><tbody><tr><th>Field</th><th>Value</th></tr>"
        "<tr><td>Owner</td><td>Jo Park</td></tr><tr><td>Status</td><td>Active</td></tr></tbody></table>"
    )
    assert html_to_text(field_value) == "Owner: Jo Park\nStatus: Active"
    # rows headed by their own <th> (a vertical properties table)
    row_headed = (
        "<table><tr><th>Decided by</th><td>Ann Lee</td><td>Bo Chan</td></tr>"
        "<tr><th>Date</th><td>2025-03-01</td></tr></table>"
    )
    assert html_to_text(row_headed) == "Decided by: Ann Lee, Bo Chan\nDate: 2025-03-01"
    # a real two-column header keeps its column names
    two_columns = (
        "<table><tr><th>Service</th><th>Owner</th></tr><tr><td>Billing</td><td>Platform</td></tr></table>"
    )
    assert html_to_text(two_columns) == "Service: Billing; Owner: Platform"


def test_a_confluence_body_opening_with_a_section_heading_gets_the_page_title(tmp_path: Path) -> None:
    section = {"storage": {"value": "<h2>Who we are</h2><p>We run Atlas.</p>", "representation": "storage"}}
    own_title = {"storage": {"value": "<h1>Atlas Team</h1><p>We run Atlas.</p>", "representation": "storage"}}
    _write_json(tmp_path / "a.json", _page("1", title="Atlas Team", body=section))
    _write_json(tmp_path / "b.json", _page("2", title="Atlas Team", body=own_title))
    pages = _by_id(load_confluence(tmp_path)[0])
    assert pages["1"].content.startswith("# Atlas Team\n\n## Who we are")
    assert pages["2"].content.count("Atlas Team") == 1  # its own title heading is not doubled
