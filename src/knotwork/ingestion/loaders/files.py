"""Plain files to ``RawDocument``s: Markdown, text and HTML as structured text (``markdown``).

``source_id`` is the path relative to the root given (a single file: its name); both
``created_at`` and ``modified_at`` come from the file's mtime.  Hidden files and
folders are ignored; files with other extensions, empty files and unreadable files
are skipped and counted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.ingestion.loaders.dates import document_date
from knotwork.ingestion.loaders.errors import (
    BINARY_PROBE_BYTES,
    MAX_DOCUMENT_CHARS,
    LoaderError,
    looks_binary,
    text_encoding,
)
from knotwork.ingestion.loaders.markdown import markdown_title, markdown_to_text, unwrap_plain_text
from knotwork.ingestion.loaders.xhtml import convert_html

__all__ = [
    "HTML_SUFFIXES",
    "SUPPORTED_SUFFIXES",
    "TEXT_SUFFIXES",
    "load_file_list",
    "load_files",
    "visible_files",
]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
TEXT_SUFFIXES = MARKDOWN_SUFFIXES | {".txt", ".text", ".rst", ".adoc"}
HTML_SUFFIXES = frozenset({".html", ".htm"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES

def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    encoding = text_encoding(raw[:BINARY_PROBE_BYTES]) or "utf-8-sig"
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _document(file: Path, root: Path) -> RawDocument | None:
    suffix = file.suffix.lower()
    text = _read_text(file)
    metadata = {"path": str(file.resolve()), "extension": suffix}
    if suffix in HTML_SUFFIXES:
        converted = convert_html(text)
        content, title = converted.text, converted.title
        mime_type = "text/plain"
        metadata["original_mime_type"] = "text/html"
    elif suffix in MARKDOWN_SUFFIXES:  # soft-wrapped lines joined, markup dropped
        content, title = markdown_to_text(text), markdown_title(text)
        mime_type = "text/markdown"
    else:
        content, title = unwrap_plain_text(text).strip("\n"), markdown_title(text)
        mime_type = "text/plain"
    if not content.strip():
        return None
    mtime = datetime.fromtimestamp(file.stat().st_mtime, UTC)
    # the time the file says it was written beats its mtime (when it was copied)
    written = document_date(file.name, title, content if suffix in HTML_SUFFIXES else text)
    if written is not None:
        metadata["file_mtime"] = mtime.isoformat()
    return RawDocument(
        source_system=SourceSystem.FILE,
        source_id=file.relative_to(root).as_posix(),
        title=title or file.stem,
        content=content,
        created_at=written or mtime,
        modified_at=written or mtime,
        mime_type=mime_type,
        metadata=metadata,
    )


def visible_files(path: Path) -> list[Path]:
    """Files below ``path``, sorted, without hidden files or folders."""
    found: list[Path] = []
    for file in sorted(path.rglob("*")):
        relative = file.relative_to(path).parts
        if any(part.startswith(".") for part in relative) or not file.is_file():
            continue
        found.append(file)
    return found


def _unreadable(file: Path, max_chars: int) -> str | None:
    """Why ``file`` is skipped (binary content, too large), or None."""
    size = file.stat().st_size
    if size > max_chars:
        return f"{size:,} bytes is over the {max_chars:,} character limit"
    with file.open("rb") as handle:
        if looks_binary(handle.read(BINARY_PROBE_BYTES)):
            return "binary content, not text"
    return None


def load_files(path: Path, *, max_chars: int = MAX_DOCUMENT_CHARS,
               notes: list[str] | None = None) -> tuple[list[RawDocument], int]:
    """Load one file or a directory tree; returns ``(documents, skipped_files)``.

    Binary and over-long files are skipped with a line in ``notes`` (one such file given
    alone is an error)."""
    if not path.exists():
        raise LoaderError(f"path does not exist: {path}")
    if path.is_file():
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            raise LoaderError(f"unsupported file type {path.suffix or '(none)'}: {path.name}")
        try:
            reason = _unreadable(path, max_chars)
        except OSError as exc:
            raise LoaderError(f"cannot read {path.name}: {exc.strerror or exc}") from exc
        if reason is not None:
            raise LoaderError(f"cannot ingest {path.name}: {reason}")
        try:
            document = _document(path, path.parent)
        except OSError as exc:
            raise LoaderError(f"cannot read {path.name}: {exc.strerror or exc}") from exc
        return ([document], 0) if document is not None else ([], 1)
    return load_file_list(visible_files(path), path, max_chars=max_chars, notes=notes)


def load_file_list(files: list[Path], root: Path, *, max_chars: int = MAX_DOCUMENT_CHARS,
                   notes: list[str] | None = None) -> tuple[list[RawDocument], int]:
    """The files of ``files`` under ``root`` (source ids relative to it); others are skipped."""
    documents: list[RawDocument] = []
    skipped = 0
    for file in files:
        if file.suffix.lower() not in SUPPORTED_SUFFIXES:
            skipped += 1
            continue
        try:
            reason = _unreadable(file, max_chars)
            document = None if reason else _document(file, root)
        except OSError as exc:
            reason, document = f"cannot read: {exc.strerror or exc}", None
        if reason is not None and notes is not None:
            notes.append(f"{file.relative_to(root).as_posix()}: {reason}")
        if document is None:
            skipped += 1
        else:
            documents.append(document)
    return documents, skipped
