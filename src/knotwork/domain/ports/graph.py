"""The graph store port: entities, facts, episodes, mentions, communities, lineage."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from knotwork.domain.models import (
    Community,
    CommunityState,
    Entity,
    EntityEvidence,
    Episode,
    Fact,
    FactHit,
    GraphCounts,
)

# --------------------------------------------------------------------------- graph


@runtime_checkable
class GraphStore(Protocol):
    """Entities, facts (RELATES_TO), episodes and MENTIONS of one or more tenants.

    Writes are idempotent upserts keyed by id. Tenants never see each other's data.
    """

    def ensure_schema(self, group_id: str) -> None: ...

    def upsert_episodes(self, episodes: Sequence[Episode]) -> None: ...

    def upsert_entities(self, entities: Sequence[Entity]) -> None: ...

    def upsert_mentions(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """MERGE (episode)-[:MENTIONS]->(entity) for each (episode_id, entity_id)."""
        ...

    def upsert_facts(self, facts: Sequence[Fact]) -> None: ...

    def update_entity(self, entity: Entity, expected_version: int) -> bool:
        """Compare-and-set (optimistic locking): write name, type, aliases, keys, summary and
        properties only if the stored ``version`` is ``expected_version``; it then becomes
        ``expected_version + 1``. False when the entity is missing or was changed meanwhile.
        """
        ...

    def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]: ...

    def find_entities_by_keys(self, group_id: str, keys: Sequence[str]) -> list[Entity]:
        """Entities whose ``name_keys`` (normalised name + aliases) contain any key."""
        ...

    def get_facts(self, group_id: str, ids: Sequence[str]) -> list[Fact]: ...

    def facts_between(self, group_id: str, entity_ids: Sequence[str]) -> list[Fact]:
        """Facts (valid or not) whose two endpoints are both in ``entity_ids``."""
        ...

    def expand_facts(
        self,
        group_id: str,
        seed_ids: Sequence[str],
        *,
        depth: int = 2,
        as_of: datetime | None = None,
        include_invalid: bool = False,
        limit: int = 200,
        skip_methods: Collection[str] = (),
    ) -> list[FactHit]:
        """Facts within ``depth`` hops of the seeds, hop 0 = touching a seed; facts whose
        extraction method is in ``skip_methods`` are neither returned nor traversed.

        ``as_of``: only facts valid at that time (valid_at <= t < invalid_at).
        Without it, invalidated facts are left out unless ``include_invalid``.
        """
        ...

    def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]: ...

    def episode_entity_ids(self, group_id: str, episode_id: str) -> list[str]: ...

    def recent_episode_ids(self, group_id: str, limit: int) -> list[str]:
        """Ids of the newest episodes (by valid_at, then created_at), newest first."""
        ...

    def list_entities(self, group_id: str) -> list[Entity]: ...

    def list_facts(self, group_id: str) -> list[Fact]: ...

    def counts(self, group_id: str) -> GraphCounts: ...

    # -- lineage: withdrawing a document's evidence (a changed or deleted source page)

    def detach_document_episodes(self, group_id: str, document_ids: Sequence[str]) -> int:
        """Delete the documents' episodes (with their MENTIONS) and remove their ids from the
        ``episodes`` of every fact; facts keep their other evidence. Returns episodes deleted.
        """
        ...

    def unevidenced_facts(self, group_id: str) -> list[Fact]:
        """Facts whose ``episodes`` is empty (nothing evidences them any more)."""
        ...

    def facts_invalidated_by(self, group_id: str, ids: Sequence[str]) -> list[Fact]:
        """Facts whose ``invalidated_by`` is one of ``ids``."""
        ...

    def delete_facts(self, group_id: str, ids: Sequence[str]) -> int:
        """Delete facts by id; returns how many existed."""
        ...

    def orphan_entity_ids(self, group_id: str) -> list[str]:
        """Entities that no episode mentions and no fact touches, sorted."""
        ...

    def delete_entities(self, group_id: str, ids: Sequence[str]) -> int:
        """Delete entities (and any edge of theirs) by id; returns how many existed."""
        ...

    # -- resolution: entity merge / unmerge (issue 5)

    def entity_episode_ids(self, group_id: str, entity_id: str) -> list[str]:
        """Ids of the episodes with a MENTIONS edge to the entity, sorted."""
        ...

    def entity_evidence(self, group_id: str, ids: Sequence[str]) -> dict[str, EntityEvidence]:
        """Per existing entity: how many episodes mention it, and the earliest one's valid_at."""
        ...

    def delete_mentions(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> int:
        """Remove (episode)-[:MENTIONS]->(entity) per (episode_id, entity_id); returns how many."""
        ...

    # -- communities: Community nodes, (c)-[:HAS_MEMBER]->(entity), (parent)-[:PARENT_OF]->(c)

    def replace_communities(self, group_id: str, communities: Sequence[Community]) -> None:
        """Delete every community of the tenant, then write these with members and links."""
        ...

    def upsert_communities(self, communities: Sequence[Community]) -> None:
        """Write the properties (summary, metrics, counts) of existing or new communities.

        Membership is not touched: see :meth:`add_community_members`.
        """
        ...

    def add_community_members(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """MERGE (community)-[:HAS_MEMBER]->(entity) per (community_id, entity_id)."""
        ...

    def list_communities(self, group_id: str, level: int | None = None) -> list[Community]:
        """With members; ordered by level descending, then id."""
        ...

    def get_community(self, group_id: str, community_id: str) -> Community | None: ...

    def community_of(
        self, group_id: str, entity_ids: Sequence[str], level: int = 0
    ) -> dict[str, str]:
        """entity id -> id of its community at ``level`` (entities without one left out)."""
        ...

    def mark_stale(self, group_id: str, community_ids: Sequence[str]) -> int:
        """Set ``summary_stale``; returns how many communities exist among the ids."""
        ...

    def get_community_state(self, group_id: str) -> CommunityState | None: ...

    def save_community_state(self, state: CommunityState) -> None: ...

    def delete_group(self, group_id: str) -> None: ...

    def close(self) -> None: ...
