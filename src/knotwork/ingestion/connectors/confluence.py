"""Confluence Cloud REST API v2: a client, and a sync source for one space.

Sync of a space (see :class:`ConfluenceSource`):

1. resolve the space key (``GET /wiki/api/v2/spaces?keys=KEY``);
2. list every current page of the space *without bodies* (``GET /spaces/{id}/pages``,
   250 per request, following ``_links.next``): cheap even for tens of thousands of pages;
3. a stored page whose ``version.number`` is unchanged costs nothing more; new and changed
   pages are fetched with their storage-format bodies in batches
   (``GET /pages?id=…&body-format=storage``) and mapped exactly as the offline export
   loader does (:func:`knotwork.ingestion.loaders.confluence.page_to_document`);
4. a stored page of the space that the listing no longer holds (deleted, trashed,
   archived) or that lost all its text is reported deleted.

Authentication: Confluence Cloud takes HTTP basic auth with the account email and an API
token; without an email the token is sent as a bearer token (Data Center personal access
token). Author and ``ri:user`` mention account ids are turned into display names through
``GET /wiki/rest/api/user/bulk`` (v2 has no user lookup); when that is not allowed the ids
are kept.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

import structlog

from knotwork.domain.models import Document, ProcessingStatus, RawDocument, SourceSystem
from knotwork.ingestion.connectors.http import ConnectorError, JsonHttp, RetryPolicy, Sleep
from knotwork.ingestion.loaders.confluence import (
    is_current,
    page_to_document,
    unusable_reason,
    user_names,
    version_number,
)
from knotwork.ingestion.sync import SyncPlan

log = structlog.get_logger(__name__)

API = "/wiki/api/v2"
PAGE_LIMIT = 250  # the v2 maximum for page listings
ID_BATCH = 100  # page ids per body request
USER_BATCH = 100
_ACCOUNT_ID = re.compile(r'ri:account-id="([^"]+)"')

Page = dict[str, Any]


def site_url(base_url: str) -> str:
    """The site root: ``https://acme.atlassian.net/wiki/`` -> ``https://acme.atlassian.net``."""
    url = base_url.strip().rstrip("/")
    if not re.match(r"^https?://", url):
        raise ConnectorError(f"not an http(s) URL: {base_url!r}")
    return url.removesuffix("/wiki")


class ConfluenceClient:
    """The few Confluence Cloud endpoints a sync needs; pages come with their ``_links.base``."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        email: str | None = None,
        policy: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        timeout: float = 30.0,
    ) -> None:
        if not token:
            raise ConnectorError("no Confluence API token")
        if email:
            pair = base64.b64encode(f"{email}:{token}".encode()).decode("ascii")
            auth = f"Basic {pair}"
        else:
            auth = f"Bearer {token}"
        self.site = site_url(base_url)
        extra: dict[str, Any] = {"sleep": sleep} if sleep is not None else {}
        self._http = JsonHttp(self.site, service="Confluence", headers={"Authorization": auth},
                              policy=policy, timeout=timeout, **extra)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------------ endpoints

    def space(self, key: str) -> dict[str, Any]:
        """The space object of a space key; a ConnectorError if there is none."""
        data = self._http.get(f"{API}/spaces", {"keys": key, "limit": 1})
        results = data.get("results") if isinstance(data, dict) else None
        for space in results or []:
            if isinstance(space, dict) and str(space.get("key", "")).lower() == key.lower():
                return space
        raise ConnectorError(f"Confluence has no space with key {key!r} (or it is not visible)")

    def iter_space_pages(
        self, space_id: str, *, body_format: str | None = None
    ) -> Iterator[tuple[Page, str | None]]:
        """Every current page of a space, with the response's ``_links.base``."""
        params = {"limit": PAGE_LIMIT, "status": "current", "body-format": body_format}
        yield from self._paginate(f"{API}/spaces/{space_id}/pages", params)

    def iter_pages(
        self, ids: Iterable[str], *, body_format: str = "storage"
    ) -> Iterator[tuple[Page, str | None]]:
        """The pages with these ids (any status), with bodies, in batches of ``ID_BATCH``."""
        wanted = list(dict.fromkeys(ids))
        for start in range(0, len(wanted), ID_BATCH):
            batch = wanted[start : start + ID_BATCH]
            params = {"id": ",".join(batch), "body-format": body_format,
                      "limit": PAGE_LIMIT}
            yield from self._paginate(f"{API}/pages", params)

    def user_names(self, account_ids: Iterable[str]) -> dict[str, str]:
        """Display names by account id (v1 ``user/bulk``); {} if the endpoint is refused."""
        wanted = sorted(set(account_ids))
        names: dict[str, str] = {}
        for start in range(0, len(wanted), USER_BATCH):
            batch = wanted[start : start + USER_BATCH]
            try:
                data = self._http.get("/wiki/rest/api/user/bulk",  # accountId=a&accountId=b
                                      {"accountId": batch, "limit": USER_BATCH})
            except ConnectorError as exc:
                log.warning("confluence.user_lookup_failed", error=str(exc))
                return names
            names.update(user_names(data))
        return names

    def _paginate(self, path: str, params: Mapping[str, Any]) -> Iterator[tuple[Page, str | None]]:
        url: str | None = path
        query: Mapping[str, Any] | None = params
        while url:
            data = self._http.get(url, query)
            if not isinstance(data, dict) or not isinstance(data.get("results"), list):
                raise ConnectorError(f"Confluence: unexpected response shape for {path}")
            links = _dict(data.get("_links"))
            base = links.get("base") if isinstance(links.get("base"), str) else None
            for page in data["results"]:
                if isinstance(page, dict):
                    yield page, base
            following = links.get("next")
            url = following if isinstance(following, str) and following else None
            query = None  # the next link carries the cursor and every parameter


# --------------------------------------------------------------------------- sync source


@dataclass
class _Listing:
    space_id: str
    versions: dict[str, int] = field(default_factory=dict)
    last_modified: str = ""


class ConfluenceSource:
    """One space of one Confluence site, as an incremental :class:`SyncSource`."""

    system = SourceSystem.CONFLUENCE

    def __init__(self, client: ConfluenceClient, space_key: str) -> None:
        if not space_key.strip():
            raise ConnectorError("no Confluence space key")
        self._client = client
        self.space_key = space_key.strip()
        self.key = f"confluence:{client.site}:{self.space_key}"
        self.label = f"confluence {self.space_key}"

    def plan(self, cursor: str | None, known: Mapping[str, Document]) -> SyncPlan:
        space = self._client.space(self.space_key)
        listing = _Listing(space_id=str(space.get("id")))
        for page, _ in self._client.iter_space_pages(listing.space_id):
            if not is_current(page) or page.get("id") is None:
                continue
            page_id = str(page["id"])
            listing.versions[page_id] = version_number(page)
            modified = _dict(page.get("version")).get("createdAt")
            if isinstance(modified, str) and modified > listing.last_modified:
                listing.last_modified = modified
        mine = {sid: doc for sid, doc in known.items()
                if doc.metadata.get("space_id") == listing.space_id}
        fetch = [pid for pid, number in listing.versions.items()
                 if not _same_version(mine.get(pid), number)]
        plan = SyncPlan(
            deleted=[sid for sid in mine if sid not in listing.versions],
            unchanged=len(listing.versions) - len(fetch),
            expected=len(fetch),
            cursor=json.dumps({"space_id": listing.space_id, "pages": len(listing.versions),
                               "last_modified": listing.last_modified or None}),
        )
        plan.documents = self._documents(fetch, mine, plan)
        log.info("confluence.listed", space=self.space_key, pages=len(listing.versions),
                 fetch=len(fetch), deleted=len(plan.deleted))
        return plan

    def _documents(self, ids: list[str], mine: Mapping[str, Document],
                   plan: SyncPlan) -> Iterator[RawDocument]:
        names: dict[str, str] = {}
        for start in range(0, len(ids), ID_BATCH):
            batch = ids[start : start + ID_BATCH]
            pages = list(self._client.iter_pages(batch))
            returned = {str(page.get("id")) for page, _ in pages}
            plan.deleted.extend(i for i in batch if i not in returned and i in mine)  # purged
            accounts = {a for page, _ in pages for a in _account_ids(page)} - set(names)
            if accounts:
                names.update(self._client.user_names(accounts))
            for page, base in pages:
                document = page_to_document(page, names, base) if is_current(page) else None
                if document is not None:
                    yield document
                    continue
                plan.skipped += 1
                page_id = str(page.get("id"))
                if is_current(page):
                    log.warning("confluence.page_skipped", page=page_id,
                                reason=unusable_reason(page))
                if page_id in mine:  # trashed since the listing, or emptied: retire it
                    plan.deleted.append(page_id)


def _same_version(document: Document | None, number: int) -> bool:
    return (document is not None and number > 0
            and document.processing_status is ProcessingStatus.COMPLETED
            and document.metadata.get("version") == str(number))


def _account_ids(page: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    version = _dict(page.get("version"))
    for value in (page.get("authorId"), version.get("authorId")):
        if isinstance(value, str) and value:
            found.add(value)
    value = _dict(_dict(page.get("body")).get("storage")).get("value")
    if isinstance(value, str):
        found.update(_ACCOUNT_ID.findall(value))
    return found


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
