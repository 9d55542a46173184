"""Slack workspace exports (a directory or a .zip) to one ``RawDocument`` per conversation.

An export holds ``channels.json`` (plus ``groups.json`` for private channels, ``mpims.json``
for group DMs and ``dms.json`` for direct messages, any of which may stand alone),
``users.json``, and one folder per conversation of ``YYYY-MM-DD.json`` day files.  Every
thread (parent plus replies, in ``ts`` order, even across day files) and every
standalone top-level message becomes one document whose content is one line per
message: ``Speaker Name: text``.  Joins/leaves, topic/purpose changes, bot posts and
deleted messages are dropped.  ``channels.json`` may sit one folder down (an export
unpacked into its own folder, or zipped with its folder).
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from knotwork.domain.models import EpisodeSource, RawDocument, SourceSystem
from knotwork.ingestion.loaders.confluence import parse_json_bytes
from knotwork.ingestion.loaders.errors import LoaderError

__all__ = [
    "channel_documents",
    "find_slack_root",
    "load_slack",
    "render_slack_text",
    "user_names",
]

CHANNELS_FILE = "channels.json"
# conversation listings of an export; all but channels.json list private conversations
LISTING_FILES = (CHANNELS_FILE, "groups.json", "mpims.json", "dms.json")
_DM_LISTING = "dms.json"  # direct messages have no name: their folder is their id
_DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.json$")
_MARKUP = re.compile(r"<([^<>\n]*)>")
_PLAIN_HANDLE = re.compile(r"(?<![\w@])@(\w(?:[\w.-]*\w)?)")  # "@amara.o" typed as text
_USER_MENTION = re.compile(r"<@([A-Z0-9]+)>")  # without a |label
_LISTED_IDS = 5
_NOISE_SUBTYPES = frozenset(
    {
        "channel_join",
        "channel_leave",
        "channel_topic",
        "channel_purpose",
        "channel_name",
        "channel_archive",
        "channel_unarchive",
        "group_join",
        "group_leave",
        "group_topic",
        "group_purpose",
        "group_name",
        "group_archive",
        "group_unarchive",
        "bot_message",
        "bot_add",
        "bot_remove",
        "bot_enable",
        "bot_disable",
        "pinned_item",
        "unpinned_item",
        "tombstone",
        "message_deleted",
        "sh_room_created",
        "sh_room_shared",
        "reminder_add",
        "joiner_notification",
        "channel_convert_to_private",
        "channel_convert_to_public",
    }
)
_DELETED_TEXT = "This message was deleted."


class _Files(Protocol):
    label: str

    def exists(self, name: str) -> bool: ...

    def list_dir(self, folder: str) -> list[str]: ...

    def read(self, name: str) -> bytes: ...


class _DirFiles:
    def __init__(self, root: Path) -> None:
        self._root = root
        self.label = str(root)

    def exists(self, name: str) -> bool:
        return (self._root / name).is_file()

    def list_dir(self, folder: str) -> list[str]:
        directory = self._root / folder
        if not directory.is_dir():
            return []
        return sorted(entry.name for entry in directory.iterdir() if entry.is_file())

    def read(self, name: str) -> bytes:
        try:
            return (self._root / name).read_bytes()
        except OSError as exc:
            raise LoaderError(f"cannot read {name}: {exc.strerror or exc}") from exc


class _ZipFiles:
    def __init__(self, archive: zipfile.ZipFile, prefix: str, label: str) -> None:
        self._archive = archive
        self._prefix = prefix
        self.label = label
        self._names = {
            info.filename[len(prefix) :]
            for info in archive.infolist()
            if info.filename.startswith(prefix) and not info.is_dir()
        }

    def exists(self, name: str) -> bool:
        return name in self._names

    def list_dir(self, folder: str) -> list[str]:
        start = folder.rstrip("/") + "/"
        return sorted(
            name[len(start) :]
            for name in self._names
            if name.startswith(start) and "/" not in name[len(start) :]
        )

    def read(self, name: str) -> bytes:
        try:
            return self._archive.read(self._prefix + name)
        except (zipfile.BadZipFile, zlib.error, OSError, RuntimeError) as exc:
            raise LoaderError(f"corrupt zip archive {self.label}: cannot read {name}") from exc


def is_slack_root(directory: Path) -> bool:
    """True for a folder holding a conversation listing (``channels.json``, ``groups.json``…)."""
    return any((directory / listing).is_file() for listing in LISTING_FILES)


def find_slack_root(directory: Path) -> Path | None:
    """The folder holding the export's listings: ``directory`` itself or one level down."""
    if is_slack_root(directory):
        return directory
    try:
        children = sorted(child for child in directory.iterdir() if child.is_dir())
    except OSError:
        return None
    for child in children:
        if not child.name.startswith((".", "__MACOSX")) and is_slack_root(child):
            return child
    return None


def _zip_prefix(archive: zipfile.ZipFile) -> str | None:
    candidates = [
        name[: -len(listing)]
        for name in archive.namelist()
        for listing in LISTING_FILES
        if (name == listing or name.endswith("/" + listing)) and not name.startswith("__MACOSX")
    ]
    return min(candidates, key=lambda prefix: prefix.count("/")) if candidates else None


@dataclass(frozen=True)
class _Message:
    ts: str
    time: datetime
    thread_ts: str | None
    speaker: str
    text: str


def _str(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def user_names(data: object) -> dict[str, str]:
    """User id -> real name from a list of user objects (``users.json`` / ``users.list``),
    plus ``@handle`` -> real name for each user's name and display name (a handle two people
    share is left out), so a plain-text "@amara.o" reads as the person."""
    names: dict[str, str] = {}
    handles: dict[str, str | None] = {}
    if not isinstance(data, list):
        return names
    for user in data:
        if not isinstance(user, dict) or not _str(user.get("id")):
            continue
        profile = user.get("profile")
        if not isinstance(profile, dict):
            profile = {}
        for candidate in (
            profile.get("real_name"),
            user.get("real_name"),
            profile.get("display_name"),
            user.get("name"),
        ):
            if _str(candidate):
                names[_str(user.get("id"))] = _str(candidate)
                break
        real = names.get(_str(user.get("id")))
        for handle in (_str(user.get("name")), _str(profile.get("display_name"))):
            key = "@" + handle.lower() if handle and " " not in handle else None
            if key is not None and real and key[1:] != real.lower():
                handles[key] = real if handles.get(key, real) == real else None
    names.update({key: real for key, real in handles.items() if real is not None})
    return names


def render_slack_text(
    text: str, users: Mapping[str, str], channels: Mapping[str, str] | None = None
) -> str:
    """Slack mrkdwn to plain text: mentions to real names, links to labels, entities decoded."""
    channel_names = channels or {}

    def replace(match: re.Match[str]) -> str:
        target, _, label = match.group(1).partition("|")
        if target.startswith("@"):
            user_id = target[1:]
            return users.get(user_id) or label.lstrip("@") or user_id
        if target.startswith("#"):
            name = label or channel_names.get(target[1:]) or target[1:]
            return "#" + name.lstrip("#")
        if target.startswith("!"):
            command = target[1:]
            if command in ("here", "channel", "everyone"):
                return "@" + command
            return label
        return label or target.removeprefix("mailto:")

    rendered = _MARKUP.sub(replace, text)
    rendered = _PLAIN_HANDLE.sub(lambda m: users.get("@" + m.group(1).lower(), m.group(0)),
                                 rendered)
    return rendered.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _is_noise(message: Mapping[str, Any]) -> bool:
    if message.get("type", "message") != "message":
        return True
    if _str(message.get("subtype")) in _NOISE_SUBTYPES or message.get("bot_id"):
        return True
    return _str(message.get("text")) == _DELETED_TEXT


def _speaker(message: Mapping[str, Any], users: Mapping[str, str]) -> str:
    user_id = _str(message.get("user"))
    if user_id in users:
        return users[user_id]
    profile = message.get("user_profile")
    if isinstance(profile, dict):
        for key in ("real_name", "display_name", "name"):
            if _str(profile.get(key)):
                return _str(profile.get(key))
    return user_id or _str(message.get("username")) or "unknown"


def _parse_message(
    raw: Mapping[str, Any], users: Mapping[str, str], channels: Mapping[str, str]
) -> _Message | None:
    ts = _str(raw.get("ts"))
    try:
        time = datetime.fromtimestamp(float(ts), UTC)
    except (ValueError, OverflowError, OSError):
        return None
    text = " ".join(render_slack_text(_str(raw.get("text")), users, channels).split())
    files = raw.get("files")
    if isinstance(files, list):
        names = [
            _str(item.get("title")) or _str(item.get("name"))
            for item in files
            if isinstance(item, dict)
        ]
        shared = ", ".join(name for name in names if name)
        if shared:
            text = f"{text} [shared file: {shared}]".strip()
    if not text:
        return None
    thread_ts = _str(raw.get("thread_ts")) or None
    return _Message(ts, time, thread_ts, _speaker(raw, users), text)


def _channel_list(files: _Files) -> list[tuple[str, str]]:
    channels: list[tuple[str, str]] = []
    for listing in LISTING_FILES:
        if not files.exists(listing):
            continue
        data = parse_json_bytes(files.read(listing), listing)
        for channel in data if isinstance(data, list) else []:
            if not isinstance(channel, dict):
                continue
            name = _str(channel.get("id" if listing == _DM_LISTING else "name"))
            if name:
                channels.append((_str(channel.get("id")), name))
    return channels


def private_channel_acls(files: _Files) -> dict[str, list[str]]:
    """Readers of each private conversation (``groups.json``, ``mpims.json``, ``dms.json``, or
    ``is_private`` in channels.json):
    its members as ``user:<id>`` and ``user:<email>``, plus ``slack-channel:<id>``."""
    emails: dict[str, str] = {}
    if files.exists("users.json"):
        for user in parse_json_bytes(files.read("users.json"), "users.json") or []:
            if isinstance(user, dict):
                email = _str(_dict_of(user.get("profile")).get("email"))
                if _str(user.get("id")) and email:
                    emails[_str(user.get("id"))] = email.lower()
    acls: dict[str, list[str]] = {}
    for listing in LISTING_FILES:
        if not files.exists(listing):
            continue
        data = parse_json_bytes(files.read(listing), listing)
        for channel in data if isinstance(data, list) else []:
            if not isinstance(channel, dict) or not _str(channel.get("id")):
                continue
            if listing == CHANNELS_FILE and not channel.get("is_private"):
                continue
            members = [m for m in channel.get("members") or [] if isinstance(m, str)]
            readers = {f"slack-channel:{_str(channel.get('id'))}"}
            readers.update(f"user:{m}" for m in members)
            readers.update(f"user:{emails[m]}" for m in members if m in emails)
            acls[_str(channel.get("id"))] = sorted(readers)
    return acls


def _dict_of(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def unknown_user_ids(messages: Iterable[Mapping[str, Any]], users: Mapping[str, str]) -> list[str]:
    """User ids that messages are from or mention but ``users`` cannot name (shown raw)."""
    unknown: dict[str, None] = {}
    for message in messages:
        if _is_noise(message):
            continue
        author = _str(message.get("user"))
        profile = message.get("user_profile")
        if author and author not in users and not isinstance(profile, dict):
            unknown[author] = None
        for user_id in _USER_MENTION.findall(_str(message.get("text"))):
            if user_id not in users:
                unknown[user_id] = None
    return list(unknown)


def _load_export(files: _Files, notes: list[str] | None = None
                 ) -> tuple[list[RawDocument], int]:
    users: dict[str, str] = {}
    if files.exists("users.json"):
        users = user_names(parse_json_bytes(files.read("users.json"), "users.json"))
    channels = _channel_list(files)
    channel_names = {channel_id: name for channel_id, name in channels if channel_id}
    acls = private_channel_acls(files)
    documents: list[RawDocument] = []
    skipped = 0
    for channel_id, channel in channels:
        messages: list[Mapping[str, Any]] = []
        for day in files.list_dir(channel):
            if not _DAY_FILE.match(day):
                continue
            name = f"{channel}/{day}"
            data = parse_json_bytes(files.read(name), name)
            messages.extend(item for item in (data if isinstance(data, list) else [])
                            if isinstance(item, dict))
        found, dropped = channel_documents(channel, channel_id, messages, users, channel_names)
        if channel_id in acls:  # a private channel: only its members may read it
            found = [d.model_copy(update={"acl": acls[channel_id]}) for d in found]
        missing = unknown_user_ids(messages, users)
        if missing and notes is not None:
            listed = ", ".join(missing[:_LISTED_IDS]) + (" …" if len(missing) > _LISTED_IDS else "")
            notes.append(f"#{channel}: {len(missing)} user id(s) not in users.json ({listed}); "
                         "kept as raw ids")
        documents.extend(found)
        skipped += dropped
    return documents, skipped


def channel_documents(
    channel: str,
    channel_id: str,
    messages: Iterable[Mapping[str, Any]],
    users: Mapping[str, str],
    channel_names: Mapping[str, str],
) -> tuple[list[RawDocument], int]:
    """One channel's raw messages (export day files or Web API pages, in any order) to one
    document per thread or standalone message; returns ``(documents, skipped_messages)``.

    A message seen twice (by ``ts``) keeps its last copy; a ``message_changed`` event carries
    the current text of the message it edits.
    """
    by_ts: dict[str, Mapping[str, Any]] = {}
    for item in messages:
        edit = item.get("message") if item.get("subtype") == "message_changed" else None
        raw = edit if isinstance(edit, dict) else item  # an edit carries the current text
        by_ts[_str(raw.get("ts"))] = raw
    threads: dict[str, list[_Message]] = {}
    skipped = 0
    for raw in by_ts.values():
        message = None if _is_noise(raw) else _parse_message(raw, users, channel_names)
        if message is None:
            skipped += 1
            continue
        threads.setdefault(message.thread_ts or message.ts, []).append(message)
    documents = [_thread_document(channel, channel_id, key, threads[key])
                 for key in sorted(threads, key=_ts_order)]
    return documents, skipped


def _ts_order(ts: str) -> float:
    try:
        return float(ts)
    except ValueError:
        return float("inf")


def _thread_document(
    channel: str, channel_id: str, key: str, messages: list[_Message]
) -> RawDocument:
    messages.sort(key=lambda message: _ts_order(message.ts))
    parent = next((message for message in messages if message.ts == key), messages[0])
    metadata = {
        "channel": channel,
        "channel_id": channel_id,
        "ts": key,
        "message_count": str(len(messages)),
    }
    if len(messages) > 1 or any(message.thread_ts for message in messages):
        metadata["thread_ts"] = key
    return RawDocument(
        source_system=SourceSystem.SLACK,
        source_id=f"{channel}/{key}",
        title=f"#{channel} — {parent.speaker}, {parent.time:%Y-%m-%d %H:%M} UTC",
        content="\n".join(f"{message.speaker}: {message.text}" for message in messages),
        url=None,
        author=parent.speaker,
        created_at=parent.time,
        modified_at=messages[-1].time,
        mime_type="text/plain",
        episode_source=EpisodeSource.MESSAGE,
        metadata=metadata,
    )


def load_slack(path: Path, *, notes: list[str] | None = None) -> tuple[list[RawDocument], int]:
    """Load a Slack export directory or .zip; returns ``(documents, skipped_messages)``.

    User ids no ``users.json`` entry names are kept raw and reported in ``notes``."""
    if not path.exists():
        raise LoaderError(f"path does not exist: {path}")
    if path.is_dir():
        root = find_slack_root(path)
        if root is None:
            raise LoaderError(f"not a Slack export (no {CHANNELS_FILE}): {path}")
        return _load_export(_DirFiles(root), notes)
    try:
        with zipfile.ZipFile(path) as archive:
            prefix = _zip_prefix(archive)
            if prefix is None:
                raise LoaderError(f"not a Slack export (no {CHANNELS_FILE} in zip): {path}")
            return _load_export(_ZipFiles(archive, prefix, path.name), notes)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError) as exc:
        raise LoaderError(f"corrupt or unreadable zip archive: {path}") from exc
    except OSError as exc:
        raise LoaderError(f"cannot read {path}: {exc.strerror or exc}") from exc
