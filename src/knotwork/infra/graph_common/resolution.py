"""The merge / unmerge half of :class:`knotwork.domain.ports.GraphStore` (mixed into
``CypherGraphStore``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from knotwork.domain.models import EntityEvidence
from knotwork.domain.timeutil import from_iso
from knotwork.infra.graph_common import resolution_cypher as rq
from knotwork.infra.graph_common.records import Row, batches, validate_group_id


class ResolutionCypherMixin(ABC):
    batch_size: int

    @abstractmethod
    def _run(
        self, group_id: str, query: str, params: dict[str, Any], *, write: bool = False
    ) -> list[Row]: ...

    def entity_episode_ids(self, group_id: str, entity_id: str) -> list[str]:
        validate_group_id(group_id)
        rows = self._run(group_id, rq.ENTITY_EPISODE_IDS,
                         {"group_id": group_id, "entity_id": entity_id})
        return [str(r["id"]) for r in rows]

    def entity_evidence(self, group_id: str, ids: Sequence[str]) -> dict[str, EntityEvidence]:
        validate_group_id(group_id)
        out: dict[str, EntityEvidence] = {}
        for chunk in batches(list(dict.fromkeys(ids)), self.batch_size):
            for row in self._run(group_id, rq.ENTITY_EVIDENCE,
                                 {"group_id": group_id, "ids": list(chunk)}):
                starts = [t for t in (from_iso(str(v)) for v in row["starts"] or [] if v) if t]
                out[str(row["id"])] = EntityEvidence(episodes=int(row["episodes"]),
                                                     first_seen=min(starts, default=None))
        return out

    def delete_mentions(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> int:
        validate_group_id(group_id)
        rows: list[Row] = [{"episode_id": ep, "entity_id": ent} for ep, ent in dict.fromkeys(pairs)]
        deleted = 0
        for chunk in batches(rows, self.batch_size):
            result = self._run(group_id, rq.DELETE_MENTIONS,
                               {"group_id": group_id, "rows": list(chunk)}, write=True)
            deleted += int(result[0]["written"]) if result else 0
        return deleted
