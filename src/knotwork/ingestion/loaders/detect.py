"""Pick the right loader for a path and run it.

- a ``.zip``, or a directory with ``channels.json`` (itself or one folder down): Slack
- a directory (or ``.json`` file) whose JSON looks like Confluence page objects: Confluence
- a Markdown / text / HTML file, or a directory containing such files: files
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.models import RawDocument
from knotwork.ingestion.loaders.confluence import (
    USERS_FILE,
    load_confluence,
    looks_like_page,
    page_objects,
    read_json,
)
from knotwork.ingestion.loaders.errors import MAX_DOCUMENT_CHARS, LoaderError
from knotwork.ingestion.loaders.files import SUPPORTED_SUFFIXES, load_files
from knotwork.ingestion.loaders.slack import find_slack_root, load_slack

__all__ = ["LoadResult", "LoaderError", "SourceKind", "detect_kind", "load_path"]

_MAX_PROBED_JSON = 50


class SourceKind(StrEnum):
    CONFLUENCE = "confluence"
    SLACK = "slack"
    FILES = "files"
    MIXED = "mixed"  # a folder of several exports, e.g. confluence/ and slack/


class LoadResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: SourceKind
    documents: list[RawDocument] = Field(default_factory=list)
    skipped: int = 0
    notes: list[str] = Field(default_factory=list)  # skipped-and-reported items, one line each


def _has_pages(data: object) -> bool:
    pages, _ = page_objects(data)
    return any(looks_like_page(page) for page in pages)


def _visible(path: Path, root: Path) -> bool:
    return not any(part.startswith(".") for part in path.relative_to(root).parts)


def _detect_file(path: Path) -> SourceKind:
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return SourceKind.SLACK
    if suffix == ".json":
        if _has_pages(read_json(path)):
            return SourceKind.CONFLUENCE
        raise LoaderError(f"not a Confluence page export: {path.name}")
    if suffix in SUPPORTED_SUFFIXES:
        return SourceKind.FILES
    raise LoaderError(f"unsupported file type {suffix or '(none)'}: {path.name}")


def _detect_dir(path: Path) -> SourceKind:
    if find_slack_root(path) is not None:
        return SourceKind.SLACK
    malformed: LoaderError | None = None
    json_files = [
        file
        for file in sorted(path.rglob("*.json"))
        if file.name != USERS_FILE and file.is_file() and _visible(file, path)
    ]
    for file in json_files[:_MAX_PROBED_JSON]:
        try:
            data = read_json(file, path)
        except LoaderError as exc:
            malformed = malformed or exc
            continue
        if _has_pages(data):
            return SourceKind.CONFLUENCE
    for file in path.rglob("*"):
        if file.suffix.lower() in SUPPORTED_SUFFIXES and file.is_file() and _visible(file, path):
            return SourceKind.FILES
    if malformed is not None:
        raise malformed
    raise LoaderError(
        f"nothing ingestible in {path}: no Slack export, Confluence pages or .md/.txt/.html files"
    )


def detect_kind(path: Path) -> SourceKind:
    """Which loader handles ``path``; ``LoaderError`` when none does."""
    if not path.exists():
        raise LoaderError(f"path does not exist: {path}")
    return _detect_dir(path) if path.is_dir() else _detect_file(path)


def _sub_exports(path: Path) -> list[Path]:
    """Sub-folders that are exports of their own, when ``path`` holds nothing itself."""
    if not path.is_dir() or (path / "channels.json").exists():
        return []
    if any(f.is_file() and _visible(f, path) for f in path.iterdir()):
        return []
    subdirs = sorted(d for d in path.iterdir() if d.is_dir() and _visible(d, path))
    found = []
    for sub in subdirs:
        try:
            detect_kind(sub)
        except LoaderError:
            continue
        found.append(sub)
    return found if len(found) >= 2 else []


def load_path(path: Path, *, max_chars: int = MAX_DOCUMENT_CHARS) -> LoadResult:
    """Detect the kind of ``path`` and load it into ``RawDocument``s.

    Items over ``max_chars`` characters, binary files and Slack user ids without a name are
    skipped or kept raw and reported in ``notes``; a malformed export is a ``LoaderError``."""
    path = Path(path).expanduser()
    if not path.exists():
        raise LoaderError(f"path does not exist: {path}")
    parts = _sub_exports(path)
    if parts:
        loaded = [load_path(sub, max_chars=max_chars) for sub in parts]
        return LoadResult(kind=SourceKind.MIXED,
                          documents=[d for r in loaded for d in r.documents],
                          skipped=sum(r.skipped for r in loaded),
                          notes=[n for r in loaded for n in r.notes])
    kind = detect_kind(path)
    notes: list[str] = []
    if kind is SourceKind.SLACK:
        documents, skipped = load_slack(path, notes=notes)
    elif kind is SourceKind.CONFLUENCE:
        documents, skipped = load_confluence(path, max_chars=max_chars, notes=notes)
    else:
        documents, skipped = load_files(path, max_chars=max_chars, notes=notes)
        if not documents:
            raise LoaderError(
                f"nothing ingestible in {path}: {skipped} file(s) skipped "
                "(empty or unsupported type)"
            )
    kept = [d for d in documents if len(d.content) <= max_chars]
    for d in documents:
        if len(d.content) > max_chars:
            notes.append(f"{d.source_system.value} {d.source_id} {d.title!r}: {len(d.content):,} "
                         f"characters is over the {max_chars:,} limit")
    return LoadResult(kind=kind, documents=kept, skipped=skipped + len(documents) - len(kept),
                      notes=notes)
