"""Evidence withdrawal for the Cypher adapters (mixed into ``CypherGraphStore``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from knotwork.domain.evidence import EVIDENCE_BOOST, MAX_CONFIDENCE
from knotwork.domain.models import Fact
from knotwork.infra.graph_common import lineage_cypher as lq
from knotwork.infra.graph_common.records import (
    Row,
    batches,
    row_to_fact,
    unique,
    validate_group_id,
)


class LineageCypherMixin(ABC):
    """The lineage half of :class:`knotwork.domain.ports.GraphStore`."""

    batch_size: int

    @abstractmethod
    def _run(
        self, group_id: str, query: str, params: dict[str, Any], *, write: bool = False
    ) -> list[Row]: ...

    def _write_ids(self, group_id: str, query: str, ids: Sequence[str], column: str,
                   **params: object) -> int:
        total = 0
        for chunk in batches(unique(ids), self.batch_size):
            rows = self._run(group_id, query,
                             {"group_id": group_id, "ids": list(chunk), **params}, write=True)
            total += int(rows[0][column]) if rows else 0
        return total

    def detach_document_episodes(self, group_id: str, document_ids: Sequence[str]) -> int:
        validate_group_id(group_id)
        episode_ids: list[str] = []
        for chunk in batches(unique(document_ids), self.batch_size):
            params = {"group_id": group_id, "document_ids": list(chunk)}
            episode_ids += [str(r["id"]) for r in self._run(group_id, lq.DOCUMENT_EPISODE_IDS,
                                                              params)]
        if not episode_ids:
            return 0
        # evidence first: a crash in between leaves the episodes, and a re-run finds them again
        self._write_ids(group_id, lq.STRIP_EVIDENCE, episode_ids, "written",
                        boost=EVIDENCE_BOOST, cap=MAX_CONFIDENCE)
        self._run(group_id, lq.SYNC_ENDS, {"group_id": group_id}, write=True)
        return self._write_ids(group_id, lq.DELETE_EPISODES_BY_ID, episode_ids, "deleted")

    def unevidenced_facts(self, group_id: str) -> list[Fact]:
        validate_group_id(group_id)
        rows = self._run(group_id, lq.UNEVIDENCED_FACTS, {"group_id": group_id})
        return [row_to_fact(r) for r in rows]

    def facts_invalidated_by(self, group_id: str, ids: Sequence[str]) -> list[Fact]:
        validate_group_id(group_id)
        found: list[Fact] = []
        for chunk in batches(unique(ids), self.batch_size):
            rows = self._run(group_id, lq.FACTS_INVALIDATED_BY,
                             {"group_id": group_id, "ids": list(chunk)})
            found += [row_to_fact(r) for r in rows]
        return found

    def delete_facts(self, group_id: str, ids: Sequence[str]) -> int:
        validate_group_id(group_id)
        return self._write_ids(group_id, lq.DELETE_FACTS_BY_ID, ids, "deleted")

    def orphan_entity_ids(self, group_id: str) -> list[str]:
        validate_group_id(group_id)
        rows = self._run(group_id, lq.ORPHAN_ENTITY_IDS, {"group_id": group_id})
        return [str(r["id"]) for r in rows]

    def delete_entities(self, group_id: str, ids: Sequence[str]) -> int:
        validate_group_id(group_id)
        return self._write_ids(group_id, lq.DELETE_ENTITIES_BY_ID, ids, "deleted")
