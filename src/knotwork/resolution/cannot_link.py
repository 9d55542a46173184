"""Cannot-link constraints: names that must never again resolve to an entity.

A split (or a reviewer's "merge into another") moves mentions off an entity; the forms it moved
are stored as (entity id, normalised name) pairs. Resolution at ingest, ``resolve``, the
consolidation pass and re-resolution all consult them, so re-ingesting the same documents or
re-resolving the group does not undo the reviewer's decision. An explicit merge by an admin is
not constrained (it is itself a human decision).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from knotwork.domain.models import Entity
from knotwork.resolution.normalize import normalize_name


@dataclass(frozen=True)
class CannotLink:
    blocked: dict[str, frozenset[str]] = field(default_factory=dict)  # name key -> entity ids

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> CannotLink:
        out: dict[str, set[str]] = {}
        for entity_id, key in pairs:
            out.setdefault(key, set()).add(entity_id)
        return cls({k: frozenset(v) for k, v in out.items()})

    def __bool__(self) -> bool:
        return bool(self.blocked)

    def allows(self, entity_id: str, names: Iterable[str]) -> bool:
        """Whether a mention with these names may resolve to ``entity_id``."""
        if not self.blocked:
            return True
        return not any(entity_id in self.blocked.get(normalize_name(n), ()) for n in names)

    def allows_pair(self, a: Entity, b: Entity) -> bool:
        """Whether two entities may be merged automatically."""
        return self.allows(b.id, _names(a)) and self.allows(a.id, _names(b))


def _names(entity: Entity) -> list[str]:
    return [entity.canonical_name, entity.name, *entity.aliases, *entity.name_keys]


def load_cannot_link(rt: object, group_id: str) -> CannotLink:
    """The group's constraints (none without the SQL document store)."""
    from knotwork.infra.sql.action_store import SqlActionStore
    from knotwork.resolution.service import resolution_sql
    from knotwork.runtime import Runtime

    assert isinstance(rt, Runtime)
    sql = resolution_sql(rt)
    if sql is None:
        return CannotLink()
    return CannotLink.of(SqlActionStore(sql.documents).cannot_links(group_id))
