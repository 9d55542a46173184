"""Community storage for the Cypher adapters (mixed into ``CypherGraphStore``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import structlog

from knotwork.domain.models import Community, CommunityState
from knotwork.domain.timeutil import to_iso, utcnow
from knotwork.infra.graph_common import community_cypher as cq
from knotwork.infra.graph_common.records import (
    Row,
    batches,
    community_to_row,
    row_to_community,
    row_to_state,
    state_to_row,
    unique,
    validate_group_id,
)

log = structlog.get_logger(__name__)

DELETE_BATCH = 5000


class CommunityCypherMixin(ABC):
    """The community half of :class:`knotwork.domain.ports.GraphStore`."""

    batch_size: int

    @abstractmethod
    def _run(
        self, group_id: str, query: str, params: dict[str, Any], *, write: bool = False
    ) -> list[Row]: ...

    @abstractmethod
    def _ready(self, group_id: str) -> None: ...

    @abstractmethod
    def _write_batches(self, group_id: str, query: str, rows: Sequence[Row]) -> int: ...

    # ------------------------------------------------------------------ writes

    def replace_communities(self, group_id: str, communities: Sequence[Community]) -> None:
        validate_group_id(group_id)
        for community in communities:
            if community.group_id != group_id:
                raise ValueError(
                    f"community {community.id} belongs to {community.group_id!r}, not {group_id!r}"
                )
        self._ready(group_id)
        self._delete_communities(group_id)
        self._write_communities(group_id, communities)
        pairs = [(c.id, e) for c in communities for e in c.entity_ids]
        self._add_members(group_id, pairs)
        links: list[Row] = [
            {"id": c.id, "parent_id": c.parent_id} for c in communities if c.parent_id
        ]
        self._write_batches(group_id, cq.LINK_PARENTS, links)

    def upsert_communities(self, communities: Sequence[Community]) -> None:
        grouped: dict[str, list[Community]] = defaultdict(list)
        for community in communities:
            grouped[validate_group_id(community.group_id)].append(community)
        for group_id, items in grouped.items():
            self._ready(group_id)
            self._write_communities(group_id, items)

    def add_community_members(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        validate_group_id(group_id)
        if not pairs:
            return
        self._ready(group_id)
        self._add_members(group_id, list(dict.fromkeys(pairs)))
        ids = unique(c for c, _ in pairs)
        for chunk in batches(ids, self.batch_size):
            self._run(group_id, cq.RECOUNT_MEMBERS, {"group_id": group_id, "ids": list(chunk)},
                      write=True)

    def mark_stale(self, group_id: str, community_ids: Sequence[str]) -> int:
        validate_group_id(group_id)
        marked = 0
        now = to_iso(utcnow())
        for chunk in batches(unique(community_ids), self.batch_size):
            rows = self._run(group_id, cq.MARK_STALE,
                             {"group_id": group_id, "ids": list(chunk), "now": now}, write=True)
            marked += int(rows[0]["written"]) if rows else 0
        return marked

    def save_community_state(self, state: CommunityState) -> None:
        group_id = validate_group_id(state.group_id)
        self._ready(group_id)
        self._run(group_id, cq.SAVE_STATE, {"group_id": group_id, "row": state_to_row(state)},
                  write=True)

    # ------------------------------------------------------------------ reads

    def list_communities(self, group_id: str, level: int | None = None) -> list[Community]:
        validate_group_id(group_id)
        if level is None:
            rows = self._run(group_id, cq.LIST_COMMUNITIES, {"group_id": group_id})
        else:
            params = {"group_id": group_id, "level": int(level)}
            rows = self._run(group_id, cq.LIST_COMMUNITIES_AT_LEVEL, params)
        return [row_to_community(r) for r in rows]

    def get_community(self, group_id: str, community_id: str) -> Community | None:
        validate_group_id(group_id)
        rows = self._run(group_id, cq.GET_COMMUNITY, {"group_id": group_id, "id": community_id})
        return row_to_community(rows[0]) if rows else None

    def community_of(
        self, group_id: str, entity_ids: Sequence[str], level: int = 0
    ) -> dict[str, str]:
        validate_group_id(group_id)
        found: dict[str, str] = {}
        for chunk in batches(unique(entity_ids), self.batch_size):
            params = {"group_id": group_id, "ids": list(chunk), "level": int(level)}
            for row in self._run(group_id, cq.COMMUNITY_OF, params):
                found.setdefault(str(row["entity_id"]), str(row["community_id"]))
        return found

    def get_community_state(self, group_id: str) -> CommunityState | None:
        validate_group_id(group_id)
        rows = self._run(group_id, cq.GET_STATE, {"group_id": group_id})
        return row_to_state(rows[0]) if rows else None

    # ------------------------------------------------------------------ helpers

    def _delete_communities(self, group_id: str) -> None:
        while True:
            rows = self._run(group_id, cq.DELETE_COMMUNITIES_BATCH,
                             {"group_id": group_id, "batch": DELETE_BATCH}, write=True)
            if not rows or int(rows[0]["deleted"]) == 0:
                break

    def _write_communities(self, group_id: str, communities: Sequence[Community]) -> None:
        rows = list({c.id: community_to_row(c) for c in communities}.values())
        self._write_batches(group_id, cq.UPSERT_COMMUNITIES, rows)

    def _add_members(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        rows: list[Row] = [{"community_id": c, "entity_id": e} for c, e in pairs]
        written = self._write_batches(group_id, cq.ADD_MEMBERS, rows)
        if written < len(rows):
            log.warning("graph.members_skipped", group_id=group_id, missing=len(rows) - written)
