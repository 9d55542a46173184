"""The people of a Slack workspace, read from the export's ``users.json``.

A workspace's full members are the organisation's staff: bots and app users are not people,
and guests (``is_restricted`` / ``is_ultra_restricted``: single- and multi-channel guests) are
outsiders invited in. A deactivated account (``deleted``) is someone who left; the profile
title often says when ("Data Engineer (left Mar 2024)"), which is read as the end of that
month (a full date when one is given).

The members are not a document (nothing of them is retrievable text); the ingest hands them to
the employment pass (:mod:`knotwork.ingestion.employment`) as evidence of who works where.
"""

from __future__ import annotations

import calendar
import re
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from knotwork.domain.models import WorkspaceMember
from knotwork.ingestion.loaders.confluence import parse_json_bytes
from knotwork.ingestion.loaders.slack import find_slack_root, is_slack_root

__all__ = ["USERS_FILE", "WorkspaceMember", "left_date", "load_members",
           "workspace_members"]

USERS_FILE = "users.json"
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_name) if m})
# "left Mar 2024", "until September 2024", "departed 2024-09-30", "ex-employee since 05/2024"
_LEFT = re.compile(r"\b(?:left|until|departed|former|ex-\w+|alumni)\b[^\d()]{0,20}?"
                   r"(?:(?P<iso>\d{4}-\d{2}-\d{2})|(?P<mon>[A-Za-z]{3,9})\.?\s+(?P<year>\d{4})|"
                   r"(?P<mm>\d{1,2})/(?P<yy>\d{4}))", re.IGNORECASE)


def _str(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def left_date(title: str) -> datetime | None:
    """When a profile title says the person left ("(left Sep 2024)"): the end of that month."""
    found = _LEFT.search(title)
    if found is None:
        return None
    try:
        if found.group("iso"):
            return datetime.fromisoformat(found.group("iso")).replace(tzinfo=UTC)
        if found.group("mon"):
            month, year = _MONTHS.get(found.group("mon").lower()), int(found.group("year"))
        else:
            month, year = int(found.group("mm")), int(found.group("yy"))
        if not month or not 1 <= month <= 12:
            return None
        return datetime(year, month, calendar.monthrange(year, month)[1], tzinfo=UTC)
    except ValueError:
        return None


def workspace_members(data: object) -> list[WorkspaceMember]:
    """The full members of a workspace from a ``users.json`` list (bots and guests left out)."""
    out: list[WorkspaceMember] = []
    for user in data if isinstance(data, list) else []:
        if not isinstance(user, dict) or user.get("is_bot") or user.get("is_app_user"):
            continue
        if user.get("is_restricted") or user.get("is_ultra_restricted"):
            continue  # a guest: someone from outside invited into a channel
        profile = user.get("profile")
        if not isinstance(profile, dict):
            profile = {}
        name = _str(profile.get("real_name")) or _str(user.get("real_name"))
        if len(name.split()) < 2:
            continue  # a handle or a lone given name names no one for sure
        title = _str(profile.get("title"))
        left_at = left_date(title)
        left = bool(user.get("deleted")) or left_at is not None
        out.append(WorkspaceMember(name, title, _str(profile.get("email")), left,
                                   left_at if left else None))
    return out


def load_members(path: Path) -> list[WorkspaceMember]:
    """The members of the Slack export at ``path`` (a folder, one folder down, or a .zip);
    [] when there is none or its ``users.json`` cannot be read."""
    try:
        if path.is_dir():
            root = find_slack_root(path)
            users = (root / USERS_FILE) if root is not None and is_slack_root(root) else None
            if users is None or not users.is_file():
                return []
            return workspace_members(parse_json_bytes(users.read_bytes(), USERS_FILE))
        if path.suffix.lower() == ".zip":
            with zipfile.ZipFile(path) as archive:
                names = [n for n in archive.namelist()
                         if (n == USERS_FILE or n.endswith("/" + USERS_FILE))
                         and not n.startswith("__MACOSX")]
                if not names:
                    return []
                first = min(names, key=lambda n: n.count("/"))
                return workspace_members(parse_json_bytes(archive.read(first), USERS_FILE))
    except Exception:  # noqa: BLE001 - members are extra evidence; the ingest goes on without
        return []
    return []
