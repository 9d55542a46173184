"""The one place that decides a request's tenant.

A request may name a tenant in its query string (``?group_id=``, any number of times) and in
its JSON body (``"group_id"``, however the key is escaped, any number of times). Every name is
collected from the parsed request, never from raw bytes, and the decision is:

- a key bound to a tenant: that tenant; a request naming any other one gets 403;
- otherwise (a key for every tenant, or no auth): the one tenant the request names, or the
  settings' default; a request naming two different tenants gets 403.

``authorize`` makes the decision before any route runs and stores it on ``request.state``;
routes receive it through :data:`Tenant` and never read ``group_id`` themselves.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request

GROUP_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
_GROUP = re.compile(GROUP_PATTERN)
FIELD = "group_id"


@dataclass(frozen=True)
class Named:
    """What a request says about its tenant: every name, and whether a name was not a string."""

    names: tuple[str, ...] = ()
    malformed: bool = False


class _Pairs(list[tuple[str, object]]):
    """A JSON object's key/value pairs in order, duplicate keys kept."""


def _body_names(body: bytes) -> Named:
    """Every top-level ``group_id`` of a JSON object body, duplicates included (``json`` keeps
    the last one, so a check that saw only one could be fooled). Not JSON: nothing named (the
    route answers 422 for the body itself)."""
    try:
        top = json.loads(body, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        return Named()
    if not isinstance(top, _Pairs):
        return Named()
    found = [value for key, value in top if key == FIELD]
    names = tuple(v for v in found if isinstance(v, str))
    malformed = any(v is not None and not isinstance(v, str) for v in found)
    return Named(names, malformed)


async def named_tenants(request: Request) -> Named:
    """The tenants a request names: query string values first, then the JSON body's."""
    query = tuple(request.query_params.getlist(FIELD))
    body = await request.body()  # cached on the request: the route parses the same bytes
    from_body = _body_names(body) if body else Named()
    return Named(query + from_body.names, from_body.malformed)


def decide(bound: str | None, named: Named, default: str) -> str:
    """The tenant of a request whose key is bound to ``bound`` (None: every tenant)."""
    for name in named.names:
        if not _GROUP.fullmatch(name):
            raise HTTPException(422, f"group_id must match {GROUP_PATTERN}")
    distinct = set(named.names)
    if bound is not None:
        if distinct - {bound} or named.malformed:
            raise HTTPException(403, f"this key is bound to tenant {bound!r}")
        return bound
    if len(distinct) > 1:
        raise HTTPException(403, "the request names more than one tenant (group_id)")
    return distinct.pop() if distinct else default


def current_tenant(
        request: Request,
        group_id: Annotated[str | None, Query(pattern=GROUP_PATTERN, description=(
            "the tenant; a key bound to a tenant may only name its own"))] = None) -> str:
    """The tenant ``authorize`` decided for this request (``group_id`` is declared here so
    the schema documents it; its value was read, with every other name, by ``authorize``)."""
    del group_id
    tenant = getattr(request.state, "tenant", None)
    if not isinstance(tenant, str):  # pragma: no cover - authorize runs on every route
        raise TypeError("the request's tenant was not decided (authorize did not run)")
    return tenant


Tenant = Annotated[str, Depends(current_tenant)]
