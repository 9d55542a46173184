"""Dependencies shared by the routers: the app's Knotwork instance and the tenant field."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from pydantic import Field

from knotwork.core import Knotwork


def _kw(request: Request) -> Knotwork:
    """The app's instance; for a key bound to a tenant, a view defaulting to that tenant."""
    kw = request.app.state.knotwork
    assert isinstance(kw, Knotwork)
    tenant = getattr(request.state, "tenant", None)
    return kw.for_tenant(tenant) if tenant else kw


KW = Annotated[Knotwork, Depends(_kw)]
Group = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,64}$")
