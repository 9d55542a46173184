"""Local HTTP stand-ins for Confluence Cloud (REST v2) and the Slack Web API.

Real sockets: ``http.server`` in a thread on 127.0.0.1 with an ephemeral port. Responses follow
the shapes the APIs document: Confluence ``{"results": [...], "_links": {"next", "base"}}``
with relative ``next`` links carrying an opaque cursor; Slack ``{"ok": ..., "<key>": [...],
"response_metadata": {"next_cursor": ...}}``, ``ok: false`` errors with HTTP 200, and HTTP 429
with ``Retry-After``. Tests change the data between syncs and can queue failures.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

Response = tuple[int, dict[str, str], Any]


@dataclass
class Request:
    path: str
    query: dict[str, str]  # a repeated parameter's values joined by ","
    headers: dict[str, str]
    multi: dict[str, list[str]] = field(default_factory=dict)  # every value of each parameter


@dataclass
class FakeApi:
    """Base: records requests; ``failures`` (path prefix, status, headers) are served first."""

    requests: list[Request] = field(default_factory=list)
    failures: list[tuple[str, int, dict[str, str]]] = field(default_factory=list)
    base_url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def serve(self, path: str, multi: dict[str, list[str]], headers: dict[str, str]) -> Response:
        query = {k: ",".join(v) for k, v in multi.items()}
        with self.lock:
            self.requests.append(Request(path, query, headers, multi))
            for i, (prefix, status, extra) in enumerate(self.failures):
                if path.startswith(prefix):
                    del self.failures[i]
                    return status, extra, {"message": "injected failure"}
            return self.handle(path, query, headers)

    def handle(self, path: str, query: dict[str, str], headers: dict[str, str]) -> Response:
        raise NotImplementedError

    def calls(self, prefix: str) -> list[Request]:
        return [r for r in self.requests if r.path.startswith(prefix)]


def _page(items: list[Any], query: dict[str, str], limit_default: int) -> tuple[list[Any], int | None]:
    limit = int(query.get("limit") or limit_default)
    start = int(query.get("cursor") or 0)
    end = start + limit
    return items[start:end], (end if end < len(items) else None)


# --------------------------------------------------------------------------- Confluence


@dataclass
class FakeConfluence(FakeApi):
    email: str = "bot@example.com"
    token: str = "conf-token"
    space_key: str = "ENG"
    space_id: str = "98304"
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> page with body
    users: dict[str, str] = field(default_factory=dict)
    max_limit: int = 250  # the server caps ``limit`` like Confluence does

    def add_page(self, page_id: str, title: str, html: str, *, version: int = 1,
                 status: str = "current", author: str = "acc-1") -> None:
        self.pages[page_id] = {
            "id": page_id, "status": status, "title": title, "spaceId": self.space_id,
            "parentId": None, "parentType": None, "authorId": author,
            "createdAt": "2025-01-02T09:00:00.000Z",
            "version": {"number": version, "message": "", "minorEdit": False,
                        "createdAt": f"2025-02-{version:02d}T10:00:00.000Z", "authorId": author},
            "body": {"storage": {"representation": "storage", "value": html}},
            "_links": {"webui": f"/spaces/{self.space_key}/pages/{page_id}/{title.replace(' ', '+')}",
                       "editui": f"/pages/resumedraft.action?draftId={page_id}"},
        }

    def edit_page(self, page_id: str, html: str) -> None:
        page = self.pages[page_id]
        number = page["version"]["number"] + 1
        page["version"] = {**page["version"], "number": number,
                           "createdAt": f"2025-02-{number:02d}T10:00:00.000Z"}
        page["body"]["storage"]["value"] = html

    def handle(self, path: str, query: dict[str, str], headers: dict[str, str]) -> Response:
        expected = "Basic " + base64.b64encode(f"{self.email}:{self.token}".encode()).decode()
        if headers.get("authorization") != expected:
            return 401, {}, {"code": 401, "message": "Unauthorized"}
        api = "/wiki/api/v2"
        if path == f"{api}/spaces":
            found = [{"id": self.space_id, "key": self.space_key, "name": "Engineering",
                      "type": "global", "status": "current"}] \
                if query.get("keys") == self.space_key else []
            return 200, {}, {"results": found, "_links": {"base": self.base_url + "/wiki"}}
        if path == f"{api}/spaces/{self.space_id}/pages":
            wanted = set((query.get("status") or "current,archived").split(","))
            items = [p for p in self.pages.values() if p["status"] in wanted]
            return self._listing(path, items, query)
        if path == f"{api}/pages":
            ids = (query.get("id") or "").split(",")
            items = [self.pages[i] for i in ids if i in self.pages]
            return self._listing(path, items, query)
        if path == "/wiki/rest/api/user/bulk":
            ids = (query.get("accountId") or "").split(",")
            found = [{"accountId": i, "displayName": self.users[i], "type": "known"}
                     for i in ids if i in self.users]
            return 200, {}, {"results": found, "start": 0, "limit": 100, "size": len(found)}
        return 404, {}, {"message": f"no route {path}"}

    def _listing(self, path: str, items: list[dict[str, Any]], query: dict[str, str]) -> Response:
        query = {**query, "limit": str(min(int(query.get("limit") or 25), self.max_limit))}
        chosen, following = _page(sorted(items, key=lambda p: int(p["id"])), query, 25)
        body_format = query.get("body-format")
        results = []
        for page in chosen:
            copy = {k: v for k, v in page.items() if k != "body"}
            copy["body"] = {"storage": page["body"]["storage"]} if body_format == "storage" else {}
            results.append(copy)
        links: dict[str, str] = {"base": self.base_url + "/wiki"}
        if following is not None:
            params = {k: v for k, v in query.items() if k != "cursor"}
            params["cursor"] = str(following)
            links["next"] = f"{path}?{urlencode(params)}"  # relative, as Confluence sends it
        return 200, {}, {"results": results, "_links": links}


# --------------------------------------------------------------------------- Slack


@dataclass
class FakeSlack(FakeApi):
    token: str = "xoxb-test"
    team_id: str = "T0001"
    users: list[dict[str, Any]] = field(default_factory=list)
    channels: list[dict[str, Any]] = field(default_factory=list)
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # channel id -> all
    page_size: int = 200  # the server caps ``limit``

    def add_user(self, user_id: str, real_name: str) -> None:
        self.users.append({"id": user_id, "name": real_name.split()[0].lower(),
                           "real_name": real_name, "profile": {"real_name": real_name}})

    def add_channel(self, channel_id: str, name: str, *, member: bool = True) -> None:
        self.channels.append({"id": channel_id, "name": name, "is_channel": True,
                              "is_member": member, "is_archived": False})
        self.messages.setdefault(channel_id, [])

    def post(self, channel_id: str, ts: str, user: str, text: str,
             thread_ts: str | None = None, **extra: Any) -> None:
        message = {"type": "message", "ts": ts, "user": user, "text": text, **extra}
        if thread_ts:
            message["thread_ts"] = thread_ts
        self.messages[channel_id].append(message)

    def find(self, channel_id: str, ts: str) -> dict[str, Any]:
        return next(m for m in self.messages[channel_id] if m["ts"] == ts)

    def handle(self, path: str, query: dict[str, str], headers: dict[str, str]) -> Response:
        if headers.get("authorization") != f"Bearer {self.token}":
            return 200, {}, {"ok": False, "error": "invalid_auth"}
        method = path.removeprefix("/api/")
        if method == "auth.test":
            return 200, {}, {"ok": True, "team_id": self.team_id, "team": "Acme", "user": "bot"}
        if method == "users.list":
            return self._paged("members", self.users, query)
        if method == "conversations.list":
            return self._paged("channels", self.channels, query)
        if method in ("conversations.history", "conversations.replies"):
            channel = query.get("channel", "")
            if channel not in self.messages:
                return 200, {}, {"ok": False, "error": "channel_not_found"}
            if method == "conversations.history":
                return self._paged("messages", self._history(channel, query), query)
            thread = [m for m in self.messages[channel]
                      if m["ts"] == query.get("ts") or m.get("thread_ts") == query.get("ts")]
            thread.sort(key=lambda m: float(m["ts"]))
            return self._paged("messages", thread, query)
        return 200, {}, {"ok": False, "error": "unknown_method"}

    def _history(self, channel: str, query: dict[str, str]) -> list[dict[str, Any]]:
        """Top-level messages (and broadcast replies), newest first, with thread counts."""
        oldest = float(query.get("oldest") or 0)
        out = []
        for message in self.messages[channel]:
            thread_ts = message.get("thread_ts")
            is_reply = thread_ts is not None and thread_ts != message["ts"]
            if is_reply and message.get("subtype") != "thread_broadcast":
                continue
            if float(message["ts"]) < oldest:
                continue
            copy = dict(message)
            replies = [m for m in self.messages[channel]
                       if m.get("thread_ts") == message["ts"] and m["ts"] != message["ts"]]
            if replies and not is_reply:
                copy.update(thread_ts=message["ts"], reply_count=len(replies),
                            latest_reply=max(m["ts"] for m in replies))
            out.append(copy)
        return sorted(out, key=lambda m: float(m["ts"]), reverse=True)

    def _paged(self, key: str, items: list[Any], query: dict[str, str]) -> Response:
        query = {**query, "limit": str(min(int(query.get("limit") or 100), self.page_size))}
        chosen, following = _page(items, query, 100)
        body: dict[str, Any] = {"ok": True, key: chosen,
                                "response_metadata": {"next_cursor": str(following or "")}}
        if key == "messages":
            body["has_more"] = following is not None
        return 200, {}, body


# --------------------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    api: FakeApi

    def do_GET(self) -> None:  # http.server's naming
        parts = urlsplit(self.path)
        multi = parse_qs(parts.query, keep_blank_values=True)
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, extra, body = self.api.serve(parts.path, multi, headers)
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:  # silence
        pass


@contextmanager
def serve(api: FakeApi) -> Iterator[str]:
    """Run ``api`` on 127.0.0.1 (ephemeral port); yields its base URL."""
    handler = type("Handler", (_Handler,), {"api": api})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    api.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield api.base_url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
