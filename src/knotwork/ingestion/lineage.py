"""Lineage upkeep: withdrawing a document version's evidence and retiring what it leaves.

The lineage choice:

* Evidence is per episode (= chunk; episode ids are the chunk ids, stable per document and
  index). When a document changes, the episodes of its *stored* version are withdrawn before
  the new version is extracted: their ids leave every fact's ``episodes``, the episodes go
  with their MENTIONS, and their chunk passages leave the vector store. The new version then
  re-evidences what it still says (``merge_into`` appends the episode again), so a fact it
  repeats keeps its id, ``created_at``, validity and any earlier invalidation, and a fact
  another document also states keeps that other evidence.
* A fact left with no evidence is **deleted** (graph edge and vector), not given an
  ``invalid_at``: ``invalid_at`` says the fact stopped holding in the world, which a withdrawn
  page does not say, and an invalidated fact would stay invalid if a later page stated it again.
  The deletion is recorded in the audit log (action ``fact.retired``) with the fact's text,
  type, endpoints, validity and the documents whose change or deletion withdrew it.
* An entity then left with no mention and no fact is deleted too (``entity.retired``);
  surviving entities (endpoints, and those the withdrawn episodes mentioned) get their
  evidence count, first-seen time and extractive summary recomputed (``entity_evidence``,
  re-embedded when the summary changed);
  communities holding a touched entity are marked stale and, with inline summaries on,
  re-summarised.
* A document deleted at its source is withdrawn the same way, swept, and then its SQL row is
  deleted (cascading to chunks and mentions), recorded as ``document.deleted``.

Every step is idempotent and SQL comes last (a changed document is only marked COMPLETED
after its sweep), so a crash anywhere leaves work that the next run redoes. Sweeps are
tenant-wide (``unevidenced_facts``/``orphan_entity_ids``), so what a crashed run orphaned is
found too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from knotwork.communities.incremental import needs_rebuild, stale_communities
from knotwork.domain.ids import stable_id
from knotwork.domain.models import AuditEvent, Document, Fact
from knotwork.domain.ports import Collection
from knotwork.domain.timeutil import to_iso, utcnow
from knotwork.ingestion.embedding_text import (
    chunk_passage_ids,
    fact_point,
)
from knotwork.ingestion.entity_evidence import refresh_entities
from knotwork.ingestion.vector_writes import stored_vectors
from knotwork.retrieval.evidence_text import episode_sentence_ids

if TYPE_CHECKING:
    from knotwork.communities.service import CommunityService
    from knotwork.runtime import Runtime

log = structlog.get_logger(__name__)



@dataclass
class Retired:
    documents: int = 0
    episodes: int = 0
    facts: int = 0
    entities: int = 0


def _ref(document: Document) -> str:
    return f"{document.source_system}:{document.source_id}"


class Lineage:
    """Evidence withdrawal and retirement for one tenant."""

    def __init__(self, runtime: Runtime, group_id: str, communities: CommunityService) -> None:
        self._rt = runtime
        self._group = group_id
        self._communities = communities
        # entities whose evidence a withdrawal changed: the next sweep recomputes them
        self._touched: set[str] = set()

    # ------------------------------------------------------------------ steps

    def withdraw(self, documents: Sequence[Document]) -> int:
        """Take the stored versions' evidence out of the graph and the chunk vectors.

        Returns the number of episodes removed. SQL chunks are left to the caller (replaced
        by the new version, or deleted with the document).
        """
        if not documents:
            return 0
        chunk_ids = [stable_id(d.id, "chunk", str(i)) for d in documents
                     for i in range(d.chunk_count)]
        tokens = self._rt.settings.passage_tokens
        passages = [pid for chunk in self._rt.documents.get_chunks(chunk_ids)
                    for pid in chunk_passage_ids(chunk.id, chunk.content, tokens)]
        if passages:
            self._rt.vectors.delete(Collection.CHUNKS, passages)
        graph = self._rt.graph
        # the candidate sentences' vectors, as stored from these episodes (issue 23)
        sentences = [sid for episode in graph.get_episodes(self._group, chunk_ids)
                     for sid in episode_sentence_ids(episode)]
        if sentences:
            self._rt.vectors.delete(Collection.SENTENCES, sentences)
        for episode_id in chunk_ids:  # the entities these episodes mention lose evidence
            self._touched.update(graph.episode_entity_ids(self._group, episode_id))
        return graph.detach_document_episodes(self._group, [d.id for d in documents])

    def touch(self, entity_ids: Iterable[str]) -> None:
        """Have the next sweep recompute these entities' evidence fields too."""
        self._touched.update(entity_ids)

    def sweep(self, reason: str, documents: Sequence[Document]) -> Retired:
        """Retire facts without evidence, then entities without mentions or facts."""
        graph, vectors, group = self._rt.graph, self._rt.vectors, self._group
        facts = graph.unevidenced_facts(group)
        touched, self._touched = self._touched, set()
        if facts:
            graph.delete_facts(group, [f.id for f in facts])
            vectors.delete(Collection.FACTS, [f.id for f in facts])
            touched |= self._revalidate([f.id for f in facts])
        orphans = graph.orphan_entity_ids(group)
        if not facts and not orphans:
            refresh_entities(self._rt, group, touched)
            return Retired()
        endpoints = {e for f in facts for e in (f.source_id, f.target_id)}
        stale = self._stale_communities(endpoints | set(orphans))
        names = {e.id: e.name for e in graph.get_entities(group, orphans)}
        if orphans:
            graph.delete_entities(group, orphans)
            vectors.delete(Collection.ENTITIES, orphans)
        # survivors: evidence count, first seen and summary as the evidence left says
        refresh_entities(self._rt, group, (touched | endpoints) - set(orphans),
                         gone={f.id: f.fact for f in facts})
        self._audit_retired(reason, documents, facts, names)
        self._refresh(stale, len(facts), len(orphans))
        log.info("lineage.retired", group=group, reason=reason, facts=len(facts),
                 entities=len(orphans), stale_communities=len(stale))
        return Retired(facts=len(facts), entities=len(orphans))

    def delete_documents(self, documents: Sequence[Document]) -> Retired:
        """Remove documents deleted at their source, with everything only they evidenced."""
        if not documents:
            return Retired()
        episodes = self.withdraw(documents)
        retired = self.sweep("deleted", documents)
        retired.episodes = episodes
        retired.documents = self._rt.documents.delete_documents(
            self._group, [d.id for d in documents])
        for document in documents:
            detail = {"source": _ref(document), "title": document.title,
                      "content_hash": document.content_hash, "chunks": document.chunk_count}
            self._rt.documents.record_audit(AuditEvent(
                group_id=self._group, action="document.deleted", entity_id=document.id,
                detail=json.dumps(detail, ensure_ascii=False)))
        return retired

    # ------------------------------------------------------------------ helpers

    def _revalidate(self, retired: Sequence[str]) -> set[str]:
        """Facts that retired facts had ended hold again: nothing says they stopped now.
        Returns their endpoints."""
        graph, vectors = self._rt.graph, self._rt.vectors
        back = [f.model_copy(update={"invalid_at": None, "expired_at": None,
                                     "invalidated_by": None})
                for f in graph.facts_invalidated_by(self._group, retired) if f.episodes]
        if not back:
            return set()
        graph.upsert_facts(back)
        stored = stored_vectors(vectors, Collection.FACTS, self._group, [f.id for f in back])
        missing = [f for f in back if f.id not in stored]
        stored.update(zip([f.id for f in missing],
                          self._rt.embedder.embed([f.fact for f in missing]), strict=True))
        vectors.upsert(Collection.FACTS, [fact_point(f, stored[f.id]) for f in back])
        log.info("lineage.revalidated", group=self._group, facts=len(back))
        return {e for f in back for e in (f.source_id, f.target_id)}

    def _stale_communities(self, entity_ids: Iterable[str]) -> list[str]:
        graph, group = self._rt.graph, self._group
        ids = sorted(set(entity_ids))
        if not ids or graph.get_community_state(group) is None:
            return []
        leaf_of = graph.community_of(group, ids, level=0)
        parents: dict[str, str | None] = {}

        def parent(community_id: str) -> str | None:
            if community_id not in parents:
                found = graph.get_community(group, community_id)
                parents[community_id] = found.parent_id if found else None
            return parents[community_id]

        return stale_communities(ids, leaf_of, parent)

    def _refresh(self, stale: Sequence[str], facts: int, entities: int) -> None:
        """As after an ingestion batch: re-detect past the threshold, else re-summarise."""
        graph, group, settings = self._rt.graph, self._group, self._rt.settings
        state = graph.get_community_state(group)
        if not stale or state is None:
            return
        graph.mark_stale(group, stale)
        state = state.model_copy(update={
            "changed_facts": state.changed_facts + facts,
            "changed_entities": state.changed_entities + entities, "updated_at": utcnow()})
        graph.save_community_state(state)
        changed = state.changed_facts + state.changed_entities
        if needs_rebuild(changed, state.entity_count + state.fact_count,
                         settings.community_rebuild_threshold):
            self._communities.build()  # drops communities the retirement emptied
        elif settings.community_inline_summaries:
            self._communities.refresh(stale)

    def _audit_retired(self, reason: str, documents: Sequence[Document],
                       facts: Sequence[Fact], entities: dict[str, str]) -> None:
        store, refs = self._rt.documents, [_ref(d) for d in documents]
        for fact in facts:
            detail = {"reason": reason, "documents": refs, "fact": fact.fact,
                      "type": fact.type.value, "source_id": fact.source_id,
                      "target_id": fact.target_id, "valid_at": to_iso(fact.valid_at),
                      "invalid_at": to_iso(fact.invalid_at),
                      "created_at": to_iso(fact.created_at)}
            store.record_audit(AuditEvent(group_id=self._group, action="fact.retired",
                                          entity_id=fact.id,
                                          detail=json.dumps(detail, ensure_ascii=False)))
        for entity_id, name in entities.items():
            detail = {"reason": reason, "documents": refs, "name": name}
            store.record_audit(AuditEvent(group_id=self._group, action="entity.retired",
                                          entity_id=entity_id,
                                          detail=json.dumps(detail, ensure_ascii=False)))
