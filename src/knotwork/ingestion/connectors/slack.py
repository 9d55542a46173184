"""Slack Web API: a client, and a sync source for a workspace's channels.

Sync (see :class:`SlackSource`): ``auth.test`` names the workspace (the cursor key is
``slack:<team id>``), ``users.list`` gives real names, ``conversations.list`` the channels
(default: every channel the app is a member of). Per channel, ``conversations.history``
returns the top-level messages since the channel's cursor minus a look-back window (the whole
history on the first sync or with ``full``); every thread among them (a parent with replies,
or the parent of a reply broadcast to the channel) is read whole with
``conversations.replies``. Messages are grouped and rendered by the export loader's code
(:func:`knotwork.ingestion.loaders.slack.channel_documents`): one document per thread or
standalone message, so export and API ingestion give the same documents.

Edits and deletions are seen within the listed window: a changed thread is re-processed; a
stored thread or message of the channel whose time falls inside the window but which the
listing no longer holds is reported deleted. Older edits, and replies to threads older than
the window, need a ``full`` sync. All methods use cursor pagination
(``response_metadata.next_cursor``); ``ok: false`` becomes a :class:`SlackApiError`;
HTTP 429 waits ``Retry-After``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Self

import structlog

from knotwork.domain.models import Document, RawDocument, SourceSystem
from knotwork.ingestion.connectors.http import ConnectorError, JsonHttp, RetryPolicy, Sleep
from knotwork.ingestion.loaders.slack import channel_documents, user_names
from knotwork.ingestion.sync import SyncPlan

log = structlog.get_logger(__name__)

API_BASE = "https://slack.com/api"
PAGE_LIMIT = 200  # Slack recommends no more than 200 per page
DEFAULT_LOOKBACK_DAYS = 7.0
_HINTS = {
    "not_authed": "no token was sent",
    "invalid_auth": "the token is not valid",
    "token_revoked": "the token was revoked",
    "token_expired": "the token expired",
    "account_inactive": "the token's user or app was deactivated",
    "not_in_channel": "invite the app to the channel first",
    "channel_not_found": "no such channel, or the app cannot see it",
}

Message = dict[str, Any]


class SlackApiError(ConnectorError):
    """A Web API call answered ``ok: false``."""

    def __init__(self, method: str, error: str, needed: str | None = None) -> None:
        hint = _HINTS.get(error, "")
        if error == "missing_scope" and needed:
            hint = f"the token lacks the {needed} scope"
        super().__init__(f"Slack {method} failed: {error}" + (f" ({hint})" if hint else ""))
        self.method = method
        self.error = error


class SlackClient:
    """The Web API methods a sync needs, authenticated with a bot token."""

    def __init__(
        self,
        token: str,
        *,
        base_url: str = API_BASE,
        policy: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        timeout: float = 30.0,
    ) -> None:
        if not token:
            raise ConnectorError("no Slack token")
        extra: dict[str, Any] = {"sleep": sleep} if sleep is not None else {}
        self._http = JsonHttp(base_url, service="Slack",
                              headers={"Authorization": f"Bearer {token}"},
                              policy=policy, timeout=timeout, **extra)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def call(self, method: str, **params: str | float | bool | None) -> dict[str, Any]:
        data = self._http.get(f"/{method}", params)
        if not isinstance(data, dict):
            raise ConnectorError(f"Slack {method}: unexpected response shape")
        if not data.get("ok"):
            needed = data.get("needed")
            raise SlackApiError(method, str(data.get("error") or "unknown_error"),
                                needed if isinstance(needed, str) else None)
        return data

    def paginate(self, method: str, key: str,
                 **params: str | float | bool | None) -> Iterator[dict[str, Any]]:
        """Every item of ``key`` over all pages (``response_metadata.next_cursor``)."""
        cursor: str | None = None
        while True:
            data = self.call(method, **params, cursor=cursor)
            for item in data.get(key) or []:
                if isinstance(item, dict):
                    yield item
            metadata = data.get("response_metadata")
            following = metadata.get("next_cursor") if isinstance(metadata, dict) else None
            if not isinstance(following, str) or not following:
                return
            cursor = following

    def team_id(self) -> str:
        data = self.call("auth.test")
        return str(data.get("team_id") or data.get("team") or "workspace")

    def users(self) -> list[dict[str, Any]]:
        return list(self.paginate("users.list", "members", limit=PAGE_LIMIT))

    def channels(self) -> list[dict[str, Any]]:
        """Public and private channels (public only if the token may not list private ones)."""
        try:
            return self._channels("public_channel,private_channel")
        except SlackApiError as exc:
            if exc.error != "missing_scope":
                raise
            return self._channels("public_channel")

    def _channels(self, types: str) -> list[dict[str, Any]]:
        return list(self.paginate("conversations.list", "channels", types=types,
                                  exclude_archived=True, limit=PAGE_LIMIT))

    def history(self, channel_id: str, oldest: str | None = None) -> Iterator[Message]:
        return self.paginate("conversations.history", "messages", channel=channel_id,
                             oldest=oldest, inclusive=True if oldest else None,
                             limit=PAGE_LIMIT)

    def replies(self, channel_id: str, ts: str) -> Iterator[Message]:
        return self.paginate("conversations.replies", "messages", channel=channel_id, ts=ts,
                             limit=PAGE_LIMIT)


# --------------------------------------------------------------------------- sync source


def _ts(value: object) -> float | None:
    try:
        return float(str(value))
    except ValueError:
        return None


class SlackSource:
    """Channels of one Slack workspace, as an incremental :class:`SyncSource`."""

    system = SourceSystem.SLACK

    def __init__(self, client: SlackClient, channels: Sequence[str] | None = None, *,
                 lookback_days: float = DEFAULT_LOOKBACK_DAYS, full: bool = False) -> None:
        self._client = client
        self._wanted = [c.strip().lstrip("#") for c in channels or [] if c.strip().lstrip("#")]
        self._lookback = max(0.0, lookback_days) * 86_400
        self._full = full
        self._team: str | None = None
        self.label = "slack " + (", ".join(f"#{c}" for c in self._wanted) or "channels")

    @property
    def key(self) -> str:
        if self._team is None:
            self._team = self._client.team_id()
        return f"slack:{self._team}"

    def plan(self, cursor: str | None, known: Mapping[str, Document]) -> SyncPlan:
        state = _load_state(cursor)
        users = user_names(self._client.users())
        listing = self._client.channels()
        names = {str(c.get("id")): str(c.get("name")) for c in listing if c.get("name")}
        selected = self._select(listing)
        plan = SyncPlan(cursor=json.dumps({"channels": state}, sort_keys=True))
        plan.documents = self._documents(selected, state, known, users, names, plan)
        log.info("slack.listed", channels=len(selected), full=self._full)
        return plan

    def _select(self, listing: list[dict[str, Any]]) -> list[tuple[str, str]]:
        if not self._wanted:
            return [(str(c["id"]), str(c["name"])) for c in listing
                    if c.get("is_member") and c.get("id") and c.get("name")]
        by_key = {str(c.get(k)): c for c in listing for k in ("id", "name") if c.get(k)}
        missing = [w for w in self._wanted if w not in by_key]
        if missing:
            raise ConnectorError("unknown Slack channel(s): " + ", ".join(f"#{m}" for m in missing))
        selected: list[tuple[str, str]] = []
        for wanted in dict.fromkeys(self._wanted):
            channel = by_key[wanted]
            if channel.get("is_member") is False:
                raise ConnectorError(f"the Slack app is not a member of #{channel.get('name')}: "
                                     "invite it to the channel first")
            selected.append((str(channel["id"]), str(channel["name"])))
        return selected

    def _documents(self, selected: list[tuple[str, str]], state: dict[str, str],
                   known: Mapping[str, Document], users: Mapping[str, str],
                   names: Mapping[str, str], plan: SyncPlan) -> Iterator[RawDocument]:
        for channel_id, channel in selected:
            last = _ts(state.get(channel_id)) if channel_id in state else None
            oldest = None if self._full or last is None else max(0.0, last - self._lookback)
            top = list(self._client.history(channel_id,
                                            f"{oldest:.6f}" if oldest is not None else None))
            threads = {str(m["ts"]) for m in top if int(m.get("reply_count") or 0) > 0}
            threads |= {str(m["thread_ts"]) for m in top
                        if m.get("thread_ts") and m.get("thread_ts") != m.get("ts")}
            messages = list(top)
            for thread in sorted(threads, key=lambda t: _ts(t) or 0.0):
                messages.extend(self._client.replies(channel_id, thread))
            documents, skipped = channel_documents(channel, channel_id, messages, users, names)
            plan.skipped += skipped
            yield from documents
            produced = {d.source_id for d in documents}
            plan.deleted.extend(_gone(known, channel_id, channel, oldest, produced))
            newest = max((m["ts"] for m in top if _ts(m.get("ts")) is not None),
                         key=lambda t: _ts(t) or 0.0, default=None)
            if newest is not None and (last is None or (_ts(newest) or 0.0) > last):
                state[channel_id] = str(newest)
            plan.cursor = json.dumps({"channels": state}, sort_keys=True)


def _gone(known: Mapping[str, Document], channel_id: str, channel: str, oldest: float | None,
          produced: set[str]) -> list[str]:
    """Stored documents of the channel inside the listed window that the listing lacks."""
    gone = []
    for source_id, document in known.items():
        stored_channel = document.metadata.get("channel_id")
        if stored_channel != channel_id and not (
                not stored_channel and source_id.startswith(f"{channel}/")):
            continue
        when = _ts(document.metadata.get("ts") or source_id.rsplit("/", 1)[-1])
        if source_id not in produced and (oldest is None or (when is not None and when >= oldest)):
            gone.append(source_id)
    return gone


def _load_state(cursor: str | None) -> dict[str, str]:
    if not cursor:
        return {}
    try:
        data = json.loads(cursor)
    except json.JSONDecodeError:
        return {}
    channels = data.get("channels") if isinstance(data, dict) else None
    if not isinstance(channels, dict):
        return {}
    return {str(k): str(v) for k, v in channels.items()}
