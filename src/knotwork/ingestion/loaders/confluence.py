"""Confluence Cloud pages (REST API v2 page objects saved as JSON) to ``RawDocument``s.

A directory holds ``*.json`` files (searched recursively); each is one page object, a
list of them, or a paginated response ``{"results": [...], "_links": {...}}``.  An
optional ``users.json`` maps account ids to display names, either as
``{accountId: displayName}`` or as a list of user objects (``accountId`` +
``displayName``/``publicName``).  Only pages whose status is ``current`` are loaded;
when the same page id appears more than once the highest version wins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.domain.timeutil import from_iso
from knotwork.ingestion.loaders.errors import MAX_DOCUMENT_CHARS, LoaderError
from knotwork.ingestion.loaders.xhtml import html_to_text

__all__ = [
    "USERS_FILE",
    "is_current",
    "load_confluence",
    "load_confluence_files",
    "looks_like_page",
    "page_to_document",
    "read_json",
    "unusable_reason",
    "user_names",
    "version_number",
]

USERS_FILE = "users.json"


def read_json(path: Path, root: Path | None = None) -> Any:
    """Parse a JSON file; a ``LoaderError`` naming the file if it is unreadable or malformed."""
    name = _display_name(path, root)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LoaderError(f"cannot read {name}: {exc.strerror or exc}") from exc
    return parse_json_bytes(raw, name)


def parse_json_bytes(raw: bytes, name: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise LoaderError(f"malformed JSON in {name}: not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise LoaderError(
            f"malformed JSON in {name}: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc


def _display_name(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return path.name


def looks_like_page(obj: object) -> bool:
    """True for a Confluence page object (v2, or v1 with ``body.storage``)."""
    if not isinstance(obj, dict):
        return False
    body = obj.get("body")
    if isinstance(body, dict) and isinstance(body.get("storage"), dict):
        return True
    return "title" in obj and ("spaceId" in obj or "version" in obj)


def page_objects(data: object) -> tuple[list[dict[str, Any]], str | None]:
    """Page dicts in a parsed file, plus a ``_links.base`` from a paginated wrapper."""
    base: str | None = None
    items: object = data
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        links = data.get("_links")
        if isinstance(links, dict) and isinstance(links.get("base"), str):
            base = links["base"]
        items = data["results"]
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        return [], base
    return [item for item in items if isinstance(item, dict)], base


def user_names(data: object) -> dict[str, str]:
    """Account id -> display name from ``{id: name}``, a list of user objects, or a
    paginated ``{"results": [...]}`` of them (the v1 ``user/bulk`` response)."""
    users: dict[str, str] = {}
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str):
                users[str(key)] = value
            elif isinstance(value, dict):
                name = value.get("displayName") or value.get("publicName")
                if isinstance(name, str):
                    users[str(key)] = name
    elif isinstance(data, list):
        for item in data:
            if not isinstance(item, dict):
                continue
            account = item.get("accountId") or item.get("id")
            name = item.get("displayName") or item.get("publicName")
            if account is not None and isinstance(name, str):
                users[str(account)] = name
    return users


def _load_users(path: Path, root: Path) -> dict[str, str]:
    return user_names(read_json(path, root))


def _str(value: object) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return from_iso(value)
    except (ValueError, OverflowError):
        return None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _storage_value(page: Mapping[str, Any]) -> str:
    body = _dict(page.get("body"))
    for representation in ("storage", "export_view", "view", "styled_view"):  # all XHTML
        markup = _dict(body.get(representation)).get("value")
        if isinstance(markup, str) and markup.strip():
            return markup
    if isinstance(body.get("value"), str):  # body requested with a single representation
        return str(body["value"])
    return ""


def version_number(page: Mapping[str, Any]) -> int:
    number = _dict(page.get("version")).get("number")
    return number if isinstance(number, int) else 0


def is_current(page: Mapping[str, Any]) -> bool:
    """Only ``current`` pages are content (not trashed, deleted, archived or draft)."""
    return str(page.get("status") or "current").lower() == "current"


def read_restrictions(page: Mapping[str, Any]) -> list[str]:
    """Who may read a restricted page: ``user:<accountId>``, ``user:<email>``, ``group:<name>``.

    Reads the v1 ``restrictions.read.restrictions.{user,group}.results`` expansion (also what
    ``/content/{id}/restriction/byOperation/read`` returns) and a flat
    ``restrictions.read.{users,groups}`` form. No restrictions: [] (readable by everyone).
    """
    read = _dict(_dict(page.get("restrictions")).get("read"))
    nested = _dict(read.get("restrictions"))
    users = _dict(nested.get("user")).get("results", read.get("users")) or []
    groups = _dict(nested.get("group")).get("results", read.get("groups")) or []
    principals: set[str] = set()
    for user in users if isinstance(users, list) else []:
        if isinstance(user, str):
            principals.add(f"user:{user}")
        elif isinstance(user, dict):
            for key in ("accountId", "email", "username"):
                value = _str(user.get(key))
                if value:
                    principals.add(f"user:{value.lower() if key == 'email' else value}")
    for group in groups if isinstance(groups, list) else []:
        name = group if isinstance(group, str) else _str(_dict(group).get("name")) if isinstance(group, dict) else None
        if name:
            principals.add(f"group:{name}")
    return sorted(principals)


def _heading_key(line: str) -> str:
    return " ".join(re.findall(r"\w+", line.lower()))


def page_to_document(
    page: Mapping[str, Any], users: Mapping[str, str], base: str | None
) -> RawDocument | None:
    """One page object (v2, or v1 with ``body.storage``) to a document; None without text.

    ``base`` is the ``_links.base`` of the response that held the page (for its URL).
    """
    page_id = _str(page.get("id"))
    if page_id is None:
        return None
    content = html_to_text(_storage_value(page), users)
    if not content.strip():
        return None
    title = _str(page.get("title"))
    first_line = content.lstrip().split("\n", 1)[0]
    # as the page shows it: its title names its subject; a body opening with a section
    # heading ("## Who we are") has no title of its own
    if title and not re.match(r"#\s", first_line) and _heading_key(first_line) != _heading_key(title):
        content = f"# {title}\n\n{content}"
    version = _dict(page.get("version"))
    history = _dict(page.get("history"))  # v1 shape
    links = _dict(page.get("_links"))
    webui = _str(links.get("webui"))
    link_base = _str(links.get("base")) or base
    url = None
    if webui:
        url = link_base.rstrip("/") + webui if link_base and webui.startswith("/") else webui
    author_id = _str(version.get("authorId")) or _str(page.get("authorId"))
    if author_id is None:
        by = _dict(version.get("by"))
        author_id = _str(by.get("accountId")) or _str(by.get("displayName"))
    created = _time(page.get("createdAt")) or _time(history.get("createdDate"))
    modified = _time(version.get("createdAt")) or _time(version.get("when")) or created
    metadata: dict[str, str] = {}
    space_id = _str(page.get("spaceId")) or _str(_dict(page.get("space")).get("key"))
    if space_id:
        metadata["space_id"] = space_id
    parent_id = _str(page.get("parentId"))
    if parent_id:
        metadata["parent_id"] = parent_id
    if "number" in version:
        metadata["version"] = str(version["number"])
    creator = _str(page.get("authorId"))
    if creator:
        metadata["created_by"] = users.get(creator, creator)
    return RawDocument(
        acl=read_restrictions(page),
        source_system=SourceSystem.CONFLUENCE,
        source_id=page_id,
        title=title or f"Confluence page {page_id}",
        content=content,
        url=url,
        author=users.get(author_id, author_id) if author_id else None,
        created_at=created,
        modified_at=modified,
        mime_type="text/plain",
        metadata=metadata,
    )


def load_confluence(path: Path, *, max_chars: int = MAX_DOCUMENT_CHARS,
                    notes: list[str] | None = None) -> tuple[list[RawDocument], int]:
    """Load a directory (or one JSON file) of Confluence pages.

    Returns ``(documents, skipped)``: skipped counts non-current pages, pages without
    text, JSON values that are not pages, and pages whose body is over ``max_chars``
    characters (each of those also gets a line in ``notes``).
    """
    if not path.exists():
        raise LoaderError(f"path does not exist: {path}")
    if not path.is_dir():
        return load_confluence_files([path], path.parent, max_chars=max_chars, notes=notes)
    files = [file for file in sorted(path.rglob("*.json"))
             if not any(part.startswith(".") for part in file.relative_to(path).parts)]
    return load_confluence_files(files, path, max_chars=max_chars, notes=notes)


def load_confluence_files(files: list[Path], root: Path, *, max_chars: int = MAX_DOCUMENT_CHARS,
                          notes: list[str] | None = None) -> tuple[list[RawDocument], int]:
    """``load_confluence`` over given JSON ``files``; ``root/users.json`` names the authors."""
    users_path = root / USERS_FILE
    users = _load_users(users_path, root) if users_path.is_file() else {}
    best: dict[str, tuple[int, RawDocument]] = {}
    skipped = 0
    for file in files:
        if file.name == USERS_FILE:
            continue
        name = _display_name(file, root)
        pages, base = page_objects(read_json(file, root))
        if not pages:
            skipped += 1
            _note(notes, f"{name}: no Confluence page objects in it")
            continue
        for page in pages:
            if not is_current(page):
                skipped += 1  # trashed, archived, draft: not content, no note
                continue
            if not looks_like_page(page):
                skipped += 1
                _note(notes, f"{name}: {_page_ref(page)}: not a Confluence page object "
                             "(no body.storage, nor a title with spaceId or version)")
                continue
            size = len(_storage_value(page))
            if size > max_chars:
                skipped += 1
                if notes is not None:
                    notes.append(f"Confluence page {_str(page.get('id'))} "
                                 f"{_str(page.get('title')) or ''!r}: body of {size:,} "
                                 f"characters is over the {max_chars:,} limit")
                continue
            document = page_to_document(page, users, base)
            if document is None:
                skipped += 1
                _note(notes, f"{name}: {_page_ref(page)}: {unusable_reason(page)}")
                continue
            number = version_number(page)
            previous = best.get(document.source_id)
            if previous is not None:
                skipped += 1
                if previous[0] >= number:
                    continue
            best[document.source_id] = (number, document)
    return [document for _, document in best.values()], skipped


def _note(notes: list[str] | None, line: str) -> None:
    if notes is not None:
        notes.append(line)


def _page_ref(page: Mapping[str, Any]) -> str:
    title = _str(page.get("title"))
    return f"page {_str(page.get('id')) or '(no id)'}" + (f" {title!r}" if title else "")


def unusable_reason(page: Mapping[str, Any]) -> str:
    """Why ``page_to_document`` gave nothing for a page object."""
    if _str(page.get("id")) is None:
        return f"its id is {_kind(page.get('id'))}, not a string or number"
    body = page.get("body")
    if not isinstance(body, dict):
        return f"its body is {_kind(body)}, not an object with a storage value"
    return "its body has no text (body.storage.value is empty or not a string)"


def _kind(value: object) -> str:
    return "missing" if value is None else f"a {type(value).__name__}"
