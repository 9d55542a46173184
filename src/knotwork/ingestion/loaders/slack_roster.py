"""A Slack workspace's member list (``users.json``) as one directory document.

Every person of a workspace works at the workspace's company. The export names no company,
but its members' e-mail domain does ("@bluefin-labs.io" → the company the graph knows as
"Bluefin Labs"): each human member becomes one record line

    Member: Ondrej Vasko; Display name: Ondra; Title: Staff Engineer; Domain: bluefin-labs.io

of a document whose episodes are ``EpisodeSource.DIRECTORY``: structural evidence, read by
``extraction.workspace`` (WORKS_AT facts, method "roster"), never quoted as an answer sentence.
A deactivated member (``deleted``) is marked "Status: deactivated": they worked there and no
longer do. Bots, app users and members without a real name are left out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from knotwork.domain.models import EpisodeSource, RawDocument, SourceSystem

ROSTER_SOURCE_ID = "users.json"
ROSTER_TITLE = "Slack workspace members"
_DOMAIN = re.compile(r"@([a-z0-9.-]+\.[a-z]{2,})$", re.IGNORECASE)
# a field value must not break the record format
_UNSAFE = re.compile(r"[;|\n]+")


def _str(value: object) -> str:
    return _UNSAFE.sub(" ", value).strip() if isinstance(value, str) else ""


def _is_person(user: Mapping[str, Any]) -> bool:
    return not (user.get("is_bot") or user.get("is_app_user") or user.get("id") == "USLACKBOT")


def workspace_domain(users: Sequence[Mapping[str, Any]]) -> str | None:
    """The e-mail domain most of the workspace's people share (a majority), if any."""
    domains: Counter[str] = Counter()
    people = 0
    for user in users:
        if not _is_person(user):
            continue
        people += 1
        profile = user.get("profile") if isinstance(user.get("profile"), dict) else {}
        found = _DOMAIN.search(_str(profile.get("email")))
        if found:
            domains[found.group(1).lower()] += 1
    if not domains:
        return None
    domain, count = domains.most_common(1)[0]
    return domain if count * 2 > people else None


def roster_lines(users: Sequence[Mapping[str, Any]]) -> list[str]:
    """One record line per human member with a real name."""
    domain = workspace_domain(users)
    lines: list[str] = []
    for user in users:
        if not _is_person(user):
            continue
        profile = user.get("profile") if isinstance(user.get("profile"), dict) else {}
        name = _str(profile.get("real_name")) or _str(user.get("real_name"))
        if len(name.split()) < 2:
            continue  # a handle or a first name alone names nobody for sure
        fields = [f"Member: {name}"]
        display = _str(profile.get("display_name"))
        if display and display.lower() != name.lower():
            fields.append(f"Display name: {display}")
        if _str(profile.get("title")):
            fields.append(f"Title: {_str(profile.get('title'))}")
        found = _DOMAIN.search(_str(profile.get("email")))
        member_domain = found.group(1).lower() if found else domain
        if member_domain and member_domain == domain:
            fields.append(f"Domain: {member_domain}")
        if user.get("deleted"):
            fields.append("Status: deactivated")
        lines.append("; ".join(fields))
    return lines


def roster_document(users: object, as_of: datetime | None) -> RawDocument | None:
    """The directory document of a workspace's members; ``as_of``: the export's last message
    time (a deactivated member had left by then). None without members."""
    if not isinstance(users, list):
        return None
    lines = roster_lines([u for u in users if isinstance(u, dict)])
    if not lines:
        return None
    return RawDocument(
        source_system=SourceSystem.SLACK, source_id=ROSTER_SOURCE_ID, title=ROSTER_TITLE,
        content="\n".join(lines), created_at=as_of, modified_at=as_of,
        episode_source=EpisodeSource.DIRECTORY, metadata={"kind": "roster"})
