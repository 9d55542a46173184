"""JSON over HTTP with bounded retries: the transport both API connectors share.

Retried: HTTP 429 (after ``Retry-After`` seconds or HTTP-date, else exponential backoff),
HTTP 5xx and transport failures (refused connection, timeout), with exponential backoff
``base_delay * 2**attempt``; every wait is capped at ``max_delay`` and at most
``max_retries`` retries are made. Everything else that is not 2xx fails at once with a
:class:`ConnectorError` whose message is one line and never contains a credential.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import structlog

from knotwork.ingestion.loaders.errors import LoaderError

log = structlog.get_logger(__name__)

Sleep = Callable[[float], None]
Params = Mapping[str, str | float | bool | list[str] | None]

_RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})


class ConnectorError(LoaderError):
    """A source API could not be read; ``str(err)`` is one line for the user."""


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        wanted = retry_after if retry_after is not None else self.base_delay * (2**attempt)
        return max(0.0, min(wanted, self.max_delay))


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP-date; None if absent/bad."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class JsonHttp:
    """GET JSON from one service. ``service`` names it in error messages."""

    def __init__(
        self,
        base_url: str,
        *,
        service: str,
        headers: Mapping[str, str] | None = None,
        policy: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.service = service
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._client = httpx.Client(
            base_url=self.base_url,
            headers={"Accept": "application/json", **dict(headers or {})},
            timeout=timeout,
            transport=transport,
            follow_redirects=True,
        )

    def close(self) -> None:
        self._client.close()

    def get(self, path: str, params: Params | None = None) -> Any:
        """The decoded JSON body of ``GET path`` (a path under the base URL, or a full URL)."""
        # httpx replaces (not merges) a URL's query string with any ``params``, even empty ones:
        # a next-page link that carries its own query must be sent with none
        query = {k: v for k, v in (params or {}).items() if v is not None} or None
        attempt = 0
        while True:
            try:
                response = self._client.get(path, params=query)
            except httpx.TransportError as exc:
                if attempt >= self.policy.max_retries:
                    raise ConnectorError(
                        f"cannot reach {self.service} at {self.base_url}: "
                        f"{type(exc).__name__} after {attempt} retries"
                    ) from exc
                self._wait(attempt, None, path, type(exc).__name__)
                attempt += 1
                continue
            if response.status_code in _RETRIED_STATUS and attempt < self.policy.max_retries:
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                self._wait(attempt, retry_after, path, f"HTTP {response.status_code}")
                attempt += 1
                continue
            return self._decode(response, path, attempt)

    def _wait(self, attempt: int, retry_after: float | None, path: str, why: str) -> None:
        delay = self.policy.delay(attempt, retry_after)
        log.info("connector.retry", service=self.service, path=_short(path), reason=why,
                 attempt=attempt + 1, delay=round(delay, 3))
        self._sleep(delay)

    def _decode(self, response: httpx.Response, path: str, retries: int) -> Any:
        status = response.status_code
        where = _short(path)
        if status in (401, 403):
            raise ConnectorError(
                f"{self.service} refused the credentials (HTTP {status}) for {where}: "
                "check the token (and, for Confluence Cloud, the account email)"
            )
        if status == 404:
            raise ConnectorError(f"{self.service}: not found (HTTP 404): {where}")
        if status in _RETRIED_STATUS:
            raise ConnectorError(
                f"{self.service}: HTTP {status} for {where}, still failing after {retries} retries"
            )
        if not 200 <= status < 300:
            raise ConnectorError(f"{self.service}: HTTP {status} for {where}: {_excerpt(response)}")
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ConnectorError(f"{self.service}: invalid JSON in the response for {where}") from exc


def _short(path: str) -> str:
    """The path without its query string (cursors are long; nothing secret is in paths)."""
    return path.split("?", 1)[0]


def _excerpt(response: httpx.Response, limit: int = 160) -> str:
    text = " ".join(response.text.split())
    return text[:limit] + ("…" if len(text) > limit else "") if text else response.reason_phrase
