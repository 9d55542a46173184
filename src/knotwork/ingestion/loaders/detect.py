"""Pick the right loader for a path and run it.

- a ``.zip`` or a directory with a Slack listing (``channels.json``, ``groups.json``, …;
  itself or one folder down): Slack
- a directory (or ``.json`` file) whose JSON looks like Confluence page objects: Confluence
- a Markdown / text / HTML file, or a directory containing such files: files
- a directory holding several of these, side by side or nested (a Slack export next to a
  folder of Confluence JSON and loose notes): each part with its own loader (``MIXED``)
- a ``.zip`` that is not a Slack export: unpacked to a temporary folder and loaded as one
"""

from __future__ import annotations

import os
import tempfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.models import RawDocument
from knotwork.ingestion.loaders.confluence import (
    USERS_FILE,
    load_confluence,
    load_confluence_files,
    looks_like_page,
    page_objects,
    read_json,
)
from knotwork.ingestion.loaders.errors import MAX_DOCUMENT_CHARS, LoaderError
from knotwork.ingestion.loaders.files import (
    SUPPORTED_SUFFIXES,
    load_file_list,
    load_files,
    visible_files,
)
from knotwork.ingestion.loaders.slack import (
    LISTING_FILES,
    find_slack_root,
    is_slack_root,
    load_slack,
)

__all__ = ["LoadResult", "LoaderError", "SourceKind", "detect_kind", "load_path"]

_MAX_PROBED_JSON = 50
_MAX_UNPACKED_BYTES = 4 * 1024**3  # a non-Slack zip is unpacked only below this size


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


def _is_slack_zip(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError):
        return True  # the Slack loader reports the corrupt archive
    return any(name.rsplit("/", 1)[-1] in LISTING_FILES for name in names
               if not name.startswith("__MACOSX"))


@contextmanager
def _unpacked(path: Path) -> Iterator[Path]:
    """A zip of documents (not a Slack export) unpacked into a temporary folder."""
    try:
        with zipfile.ZipFile(path) as archive:
            size = sum(info.file_size for info in archive.infolist())
            if size > _MAX_UNPACKED_BYTES:
                raise LoaderError(f"zip archive {path.name} unpacks to {size:,} bytes, over the "
                                  f"{_MAX_UNPACKED_BYTES:,} limit")
            with tempfile.TemporaryDirectory(prefix="knotwork-zip-") as folder:
                for info in archive.infolist():  # names are sanitised (no .., no absolute)
                    target = archive.extract(info, folder)
                    if not info.is_dir():  # a file's time is its time in the archive
                        stamp = time.mktime((*info.date_time, 0, 0, -1))
                        os.utime(target, (stamp, stamp))
                yield Path(folder)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError) as exc:
        raise LoaderError(f"corrupt or unreadable zip archive: {path}") from exc
    except OSError as exc:
        raise LoaderError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _detect_file(path: Path) -> SourceKind:
    suffix = path.suffix.lower()
    if suffix == ".zip":
        if _is_slack_zip(path):
            return SourceKind.SLACK
        with _unpacked(path) as folder:
            return detect_kind(folder)
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
    if not path.is_dir() or is_slack_root(path):
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


@dataclass
class _Survey:
    """What a directory holds, part by part: Slack exports, Confluence JSON, text files."""

    slack_roots: list[Path] = field(default_factory=list)
    page_files: dict[Path, list[Path]] = field(default_factory=dict)  # users.json root -> files
    text_files: list[Path] = field(default_factory=list)
    unsupported: int = 0
    malformed: list[str] = field(default_factory=list)  # JSON that would not parse, one line each

    @property
    def kinds(self) -> int:
        return sum(map(bool, (self.slack_roots, self.page_files, self.text_files)))


def _survey(path: Path) -> _Survey:
    """One walk of the tree. JSON is parsed only when a Slack export or text files are there
    too: a folder of pages alone is one kind, and its loader reads every page anyway."""
    survey = _Survey()
    files = visible_files(path)
    listed = sorted({f.parent for f in files if f.name in LISTING_FILES},
                    key=lambda d: len(d.parts))
    for folder in listed:  # outermost first: an export's own sub-folders are part of it
        if not any(folder.is_relative_to(root) for root in survey.slack_roots):
            survey.slack_roots.append(folder)
    json_files: list[Path] = []
    for file in files:
        if any(file.is_relative_to(root) for root in survey.slack_roots):
            continue
        suffix = file.suffix.lower()
        if suffix == ".json":
            json_files.append(file)
        elif suffix in SUPPORTED_SUFFIXES:
            survey.text_files.append(file)
        else:
            survey.unsupported += 1
    if not (survey.slack_roots or survey.text_files):
        return survey
    for file in json_files:
        try:
            pages = file.name != USERS_FILE and _has_pages(read_json(file, path))
        except LoaderError as exc:
            survey.malformed.append(str(exc))
            continue
        if pages:
            root = next((d for d in (file.parent, *file.parent.parents)
                         if (d / USERS_FILE).is_file() or d == path), path)
            survey.page_files.setdefault(root, []).append(file)
    return survey


def _load_mixed(path: Path, survey: _Survey, max_chars: int, notes: list[str]
                ) -> tuple[list[RawDocument], int]:
    documents: list[RawDocument] = []
    skipped = survey.unsupported + len(survey.malformed)
    notes.extend(f"skipped: {line}" for line in survey.malformed)
    for root in survey.slack_roots:
        found, dropped = load_slack(root, notes=notes)
        documents.extend(found)
        skipped += dropped
    for root, files in survey.page_files.items():
        found, dropped = load_confluence_files(files, root, max_chars=max_chars, notes=notes)
        documents.extend(found)
        skipped += dropped
    if survey.text_files:
        found, dropped = load_file_list(survey.text_files, path, max_chars=max_chars,
                                        notes=notes)
        documents.extend(found)
        skipped += dropped
    return documents, skipped


def load_path(path: Path, *, max_chars: int = MAX_DOCUMENT_CHARS) -> LoadResult:
    """Detect the kind of ``path`` and load it into ``RawDocument``s.

    Items over ``max_chars`` characters, binary files and Slack user ids without a name are
    skipped or kept raw and reported in ``notes``; a malformed export is a ``LoaderError``."""
    path = Path(path).expanduser()
    if not path.exists():
        raise LoaderError(f"path does not exist: {path}")
    if path.is_file() and path.suffix.lower() == ".zip" and not _is_slack_zip(path):
        with _unpacked(path) as folder:
            return load_path(folder, max_chars=max_chars)
    parts = _sub_exports(path)
    if parts:
        loaded = [load_path(sub, max_chars=max_chars) for sub in parts]
        return LoadResult(kind=SourceKind.MIXED,
                          documents=[d for r in loaded for d in r.documents],
                          skipped=sum(r.skipped for r in loaded),
                          notes=[n for r in loaded for n in r.notes])
    notes: list[str] = []
    survey = _survey(path) if path.is_dir() and not is_slack_root(path) else None
    if survey is not None and survey.kinds > 1:
        kind = SourceKind.MIXED
        documents, skipped = _load_mixed(path, survey, max_chars, notes)
    elif (kind := detect_kind(path)) is SourceKind.SLACK:
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
