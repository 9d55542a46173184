"""Dependencies shared by the routers: the app's Knotwork instance and the tenant field."""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import Depends, Request
from pydantic import Field

from knotwork.core import Knotwork
from knotwork.domain.auth import Scope


async def _kw(request: Request) -> Knotwork:
    """The app's instance; for a key bound to a tenant, a view defaulting to that tenant; for
    a key that is not admin, a read view honouring source ACLs (the key's principals).

    Async, so the common case (no key, or a key that may read everything) costs no worker
    thread; only the ACL view, which reads the tenant's restrictions, goes to one."""
    kw = request.app.state.knotwork
    assert isinstance(kw, Knotwork)
    tenant = getattr(request.state, "tenant", None)
    key = getattr(request.state, "api_key", None)
    reading = getattr(request.state, "scope", None) is Scope.QUERY  # writes see everything
    if key is not None and reading and not key.allows(Scope.ADMIN):
        group = tenant or _named_group(request) or kw.settings.group
        return await anyio.to_thread.run_sync(kw.for_reader, group, key.principals)
    return kw.for_tenant(tenant) if tenant else kw


def _named_group(request: Request) -> str | None:
    """The tenant a request names (query parameter, or the JSON body the auth check read)."""
    return request.query_params.get("group_id") or getattr(request.state, "named_group", None)


KW = Annotated[Knotwork, Depends(_kw)]
Group = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,64}$")
