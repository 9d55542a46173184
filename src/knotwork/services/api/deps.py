"""Dependencies shared by the routers: the app's Knotwork instance and the request's tenant."""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import Depends, Request
from pydantic import Field

from knotwork.core import Knotwork
from knotwork.domain.auth import Scope
from knotwork.services.api.tenancy import GROUP_PATTERN, Tenant, current_tenant

__all__ = ["KW", "Group", "Tenant"]


async def _kw(request: Request) -> Knotwork:
    """The app's instance as a view of the request's tenant (decided by ``authorize``); for a
    key that is not admin, a read view honouring source ACLs (the key's principals).

    Async, so the common case (no key, or a key that may read everything) costs no worker
    thread; only the ACL view, which reads the tenant's restrictions, goes to one."""
    kw = request.app.state.knotwork
    assert isinstance(kw, Knotwork)
    tenant = current_tenant(request)
    key = getattr(request.state, "api_key", None)
    reading = getattr(request.state, "scope", None) is Scope.QUERY  # writes see everything
    if key is not None and reading and not key.allows(Scope.ADMIN):
        return await anyio.to_thread.run_sync(kw.for_reader, tenant, key.principals)
    return kw.for_tenant(tenant)


KW = Annotated[Knotwork, Depends(_kw)]
# the request models' group_id: documented and validated; the tenant itself is decided by
# services.api.tenancy from every name the request carries
Group = Field(default=None, pattern=GROUP_PATTERN,
              description="the tenant; a key bound to a tenant may only name its own")
