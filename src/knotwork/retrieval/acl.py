"""Source ACLs at query time: a read-only view of the stores without what a caller may not read.

Documents carry the readers their source allows (``Document.acl``: ``user:…``, ``group:…``,
``slack-channel:…``; empty = everyone in the tenant). For a caller with ``principals``, the
documents whose ACL they do not meet are *blocked*, and with them their chunks (= episodes):

* chunks and episodes of blocked documents are never returned (so never cited or quoted);
* a fact is visible only while one of its evidence episodes is readable;
* an entity that only blocked episodes mention, and no visible fact touches, is hidden; an
  entity that blocked text also mentions keeps its name but loses its summary (built from
  facts of any source);
* a community's summary is rebuilt from its readable key facts when any of them is blocked,
  and vector hits on blocked chunks, facts or entities are dropped.

Retrieval code runs unchanged on the view (``Runtime`` with filtering proxies), so every mode
(local, global, DRIFT, multi-hop) gets the same guarantee.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Chunk, Community, Document, Entity, Episode, Fact, FactHit
from knotwork.domain.ports import Collection, VectorHit
from knotwork.runtime import Runtime


def readable(document: Document, principals: frozenset[str]) -> bool:
    return not document.acl or not principals.isdisjoint(document.acl)


@dataclass(frozen=True)
class Blocked:
    documents: frozenset[str]
    episodes: frozenset[str]

    def fact_visible(self, fact: Fact) -> bool:
        return not fact.episodes or any(e not in self.episodes for e in fact.episodes)


def blocked_for(rt: Runtime, group: str, principals: frozenset[str]) -> Blocked:
    docs = [d for d in rt.documents.list_documents(group) if not readable(d, principals)]
    episodes = {stable_id(d.id, "chunk", str(i)) for d in docs for i in range(d.chunk_count)}
    return Blocked(frozenset(d.id for d in docs), frozenset(episodes))


class _Forward:
    def __init__(self, inner: Any, blocked: Blocked) -> None:
        self._inner = inner
        self._blocked = blocked

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Documents(_Forward):
    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        return [c for c in self._inner.get_chunks(ids) if c.document_id not in self._blocked.documents]

    def get_documents(self, ids: Sequence[str]) -> list[Document]:
        return [d for d in self._inner.get_documents(ids) if d.id not in self._blocked.documents]

    def list_documents(self, group_id: str) -> list[Document]:
        return [d for d in self._inner.list_documents(group_id) if d.id not in self._blocked.documents]

    def chunks_mentioning(self, group_id: str, entity_ids: Sequence[str], limit: int = 50) -> list[str]:
        found = self._inner.chunks_mentioning(group_id, entity_ids, limit + len(self._blocked.episodes))
        return [c for c in found if c not in self._blocked.episodes][:limit]


class _Graph(_Forward):
    def __init__(self, inner: Any, blocked: Blocked, group: str,
                 documents: Any) -> None:
        super().__init__(inner, blocked)
        self._documents = documents
        tainted: set[str] = set()
        for episode in sorted(blocked.episodes):
            tainted.update(inner.episode_entity_ids(group, episode))
        self._tainted = frozenset(tainted)  # mentioned by blocked text
        self._hidden_cache: dict[str, bool] = {}
        self._group = group

    def _hidden(self, entity: Entity) -> bool:
        """Only blocked text mentions it, and no visible fact touches it."""
        if entity.id not in self._tainted:
            return False
        if entity.id not in self._hidden_cache:
            facts = self._inner.expand_facts(self._group, [entity.id], depth=1,
                                             include_invalid=True, limit=200)
            mentioned = self._documents.chunks_mentioning(
                self._group, [entity.id], len(self._blocked.episodes) + 1)
            seen_in_readable = any(c not in self._blocked.episodes for c in mentioned)
            self._hidden_cache[entity.id] = not seen_in_readable and not any(
                self._blocked.fact_visible(h.fact) for h in facts)
        return self._hidden_cache[entity.id]

    def _entities(self, entities: list[Entity]) -> list[Entity]:
        out = []
        for e in entities:
            if self._hidden(e):
                continue
            out.append(e.model_copy(update={"summary": ""}) if e.id in self._tainted else e)
        return out

    def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]:
        return self._entities(self._inner.get_entities(group_id, ids))

    def list_entities(self, group_id: str) -> list[Entity]:
        return self._entities(self._inner.list_entities(group_id))

    def find_entities_by_keys(self, group_id: str, keys: Sequence[str]) -> list[Entity]:
        return self._entities(self._inner.find_entities_by_keys(group_id, keys))

    def get_facts(self, group_id: str, ids: Sequence[str]) -> list[Fact]:
        return [f for f in self._inner.get_facts(group_id, ids) if self._blocked.fact_visible(f)]

    def list_facts(self, group_id: str) -> list[Fact]:
        return [f for f in self._inner.list_facts(group_id) if self._blocked.fact_visible(f)]

    def facts_between(self, group_id: str, entity_ids: Sequence[str]) -> list[Fact]:
        return [f for f in self._inner.facts_between(group_id, entity_ids)
                if self._blocked.fact_visible(f)]

    def expand_facts(self, group_id: str, seed_ids: Sequence[str], **kw: Any) -> list[FactHit]:
        return [h for h in self._inner.expand_facts(group_id, seed_ids, **kw)
                if self._blocked.fact_visible(h.fact)]

    def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]:
        return [e for e in self._inner.get_episodes(group_id, ids) if e.id not in self._blocked.episodes]

    def recent_episode_ids(self, group_id: str, limit: int) -> list[str]:
        found = self._inner.recent_episode_ids(group_id, limit + len(self._blocked.episodes))
        return [e for e in found if e not in self._blocked.episodes][:limit]

    def _community(self, community: Community) -> Community:
        facts = self._inner.get_facts(self._group, community.key_facts)
        visible = [f for f in facts if self._blocked.fact_visible(f)]
        if len(visible) == len(facts) and not (set(community.entity_ids) & self._tainted):
            return community
        members = {e.id: e for e in self._inner.get_entities(self._group, community.entity_ids)}
        hidden = {i for i, e in members.items() if self._hidden(e)}
        hidden_names = [members[i].name.lower() for i in hidden]
        central = [i for i in community.central_entities if i not in hidden]
        title = ", ".join(members[i].name for i in central[:3] if i in members) or "Community"
        return community.model_copy(update={
            # what the summary, title and topics said may come from blocked text: rebuilt
            # from what this reader may see
            "name": title,
            "summary": " ".join(f.fact for f in visible),
            "key_facts": [f.id for f in visible],
            "key_topics": [t for t in community.key_topics
                           if not any(n in t.lower() for n in hidden_names)],
            "entity_ids": [i for i in community.entity_ids if i not in hidden],
            "entity_count": len([i for i in community.entity_ids if i not in hidden]),
            "central_entities": central,
            "representative_entities": [i for i in community.representative_entities
                                        if i not in hidden],
            "citations": [c for c in community.citations if c not in self._blocked.episodes],
        })

    def list_communities(self, group_id: str, level: int | None = None) -> list[Community]:
        return [self._community(c) for c in self._inner.list_communities(group_id, level)]

    def get_community(self, group_id: str, community_id: str) -> Community | None:
        found = self._inner.get_community(group_id, community_id)
        return self._community(found) if found is not None else None


class _Vectors(_Forward):
    def __init__(self, inner: Any, blocked: Blocked, graph: _Graph, group: str) -> None:
        super().__init__(inner, blocked)
        self._graph = graph
        self._group = group

    def search(self, collection: Collection, vector: Sequence[float], *, group_id: str,
               limit: int = 10, **kw: Any) -> list[VectorHit]:
        hits = self._inner.search(collection, vector, group_id=group_id,
                                  limit=limit * 2 + 10, **kw)
        if collection is Collection.CHUNKS:
            kept = [h for h in hits if h.payload.get("document_id") not in self._blocked.documents]
        elif collection is Collection.FACTS:
            visible = {f.id for f in self._graph.get_facts(group_id, [h.id for h in hits])}
            kept = [h for h in hits if h.id in visible]
        elif collection is Collection.ENTITIES:
            visible = {e.id for e in self._graph.get_entities(group_id, [h.id for h in hits])}
            kept = [h for h in hits if h.id in visible]
        else:
            kept = hits
        return kept[:limit]


def restricted_runtime(rt: Runtime, group: str, principals: Sequence[str]) -> Runtime | None:
    """A view of ``rt`` for a caller with ``principals``; None when nothing is blocked."""
    blocked = blocked_for(rt, group, frozenset(principals))
    if not blocked.documents:
        return None
    graph = _Graph(rt.graph, blocked, group, rt.documents)
    # no query cache: cached answers were computed for other readers
    view = dataclasses.replace(rt, graph=graph, documents=_Documents(rt.documents, blocked),
                               vectors=_Vectors(rt.vectors, blocked, graph, group), cache=None)
    return view
