"""Community build, incremental upkeep and reads for one tenant, over the Runtime's stores.

Full build: project the current fact graph, hierarchical Leiden, metrics and extractive
reports, then replace the tenant's communities in the graph, their summary embeddings in the
``communities`` vector collection, and the build record; a COMMUNITIES_REBUILT event follows.
After ingestion (:meth:`CommunityService.after_ingest`): new entities join the modal community
of their neighbours, touched communities become stale (COMMUNITY_UPDATED events), past the
rebuild threshold everything is re-detected, and stale summaries are regenerated.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import redis
import structlog
from pydantic import BaseModel, ConfigDict, Field

from knotwork.communities.builder import (
    BuildParams,
    StepProgress,
    apply_summary,
    build_communities,
    summarize_members,
)
from knotwork.communities.incremental import (
    assign_new_entities,
    needs_rebuild,
    stale_communities,
    with_ancestors,
)
from knotwork.communities.llm_summaries import create_summarizer
from knotwork.communities.projection import (
    entity_view,
    fact_view,
    fact_weight,
    is_current,
    project,
)
from knotwork.communities.summaries import CommunitySummarizer
from knotwork.domain.events import (
    COMMUNITY_TOPIC,
    CommunitiesRebuilt,
    CommunityUpdated,
)
from knotwork.domain.models import DERIVED_METHODS, Community, CommunityState, Fact
from knotwork.domain.ports import Collection, VectorPoint
from knotwork.domain.timeutil import utcnow

if TYPE_CHECKING:
    from knotwork.runtime import Runtime

log = structlog.get_logger(__name__)

FACT_SCAN_LIMIT = 10_000_000  # facts touching a community's members, read for a refresh


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BuildReport(_Model):
    group_id: str
    communities: int
    levels: int
    per_level: dict[int, int]
    entities: int
    facts: int
    modularity: float
    seconds: float


class UpkeepReport(_Model):
    assigned: dict[str, str] = Field(default_factory=dict)  # entity id -> leaf community id
    stale: list[str] = Field(default_factory=list)
    resummarized: list[str] = Field(default_factory=list)
    rebuilt: bool = False


class CommunityStatus(_Model):
    group_id: str
    built: bool
    built_at: datetime | None = None
    communities: int = 0
    levels: int = 0
    per_level: dict[int, int] = Field(default_factory=dict)
    stale: int = 0
    entities: int = 0
    facts: int = 0
    modularity: float = 0.0
    changed_share: float = 0.0
    rebuild_threshold: float
    resolution: float
    max_size: int
    seed: int


class EntityRef(_Model):
    id: str
    name: str
    type: str


class FactRef(_Model):
    id: str
    type: str
    fact: str
    source: str
    target: str
    episodes: list[str]
    invalid_at: datetime | None = None


class CommunityRef(_Model):
    id: str
    name: str
    level: int
    entity_count: int


class CommunityDetail(_Model):
    community: Community
    entities: list[EntityRef]
    key_facts: list[FactRef]
    parent: CommunityRef | None = None
    children: list[CommunityRef] = Field(default_factory=list)


def _per_level(communities: Iterable[Community]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for community in communities:
        counts[community.level] = counts.get(community.level, 0) + 1
    return dict(sorted(counts.items()))


def _ref(community: Community) -> CommunityRef:
    return CommunityRef(id=community.id, name=community.name, level=community.level,
                        entity_count=community.entity_count)


class CommunityService:
    def __init__(self, runtime: Runtime, group_id: str,
                 summarizer: CommunitySummarizer | None = None) -> None:
        self._rt = runtime
        self._group = group_id
        settings = runtime.settings
        if summarizer is None:  # LLM map-reduce reports when an LLM is configured
            summarizer = create_summarizer(runtime.llm, input_tokens=settings.llm_input_tokens,
                                           key_facts=settings.community_key_facts)
        self._summarizer = summarizer
        self._params = BuildParams(resolution=settings.community_resolution,
                                   max_size=settings.community_max_size,
                                   seed=settings.community_seed,
                                   engine=settings.community_engine)

    # ------------------------------------------------------------------ full build

    def build(self, progress: StepProgress | None = None) -> BuildReport:
        started = time.perf_counter()
        graph, group = self._rt.graph, self._group
        now = utcnow()
        if progress:
            progress("load", 0, 1)
        entities = graph.list_entities(group)
        projected = project(entities, [f for f in graph.list_facts(group) if not f.derived], now)
        if progress:
            progress("load", 1, 1)
        built = build_communities(projected, group, params=self._params,
                                  summarizer=self._summarizer, now=now, progress=progress)
        if progress:
            progress("store", 0, 1)
        graph.replace_communities(group, built.communities)
        if progress:
            progress("store", 1, 1)
        self._rt.vectors.delete_group(Collection.COMMUNITIES, group)
        self._embed(built.communities, progress)
        state = CommunityState(
            group_id=group, built_at=now, entity_count=len(projected.nodes),
            fact_count=len(projected.facts), community_count=len(built.communities),
            levels=built.hierarchy.levels, modularity=built.modularity,
            total_weight=built.total_weight, resolution=self._params.resolution,
            max_size=self._params.max_size, seed=self._params.seed, updated_at=now)
        graph.save_community_state(state)
        self._publish([CommunitiesRebuilt(group_id=group, timestamp=now,
                                          community_count=state.community_count,
                                          levels=state.levels)])
        report = BuildReport(group_id=group, communities=state.community_count,
                             levels=state.levels, per_level=_per_level(built.communities),
                             entities=state.entity_count, facts=state.fact_count,
                             modularity=round(built.modularity, 6),
                             seconds=round(time.perf_counter() - started, 3))
        log.info("communities.built", **report.model_dump(exclude={"per_level"}))
        return report

    # ------------------------------------------------------------------ incremental

    def after_ingest(self, facts: Iterable[Fact]) -> UpkeepReport | None:
        """Upkeep after an ingestion batch (the facts it wrote: new, re-seen, invalidated).

        Does nothing before the tenant's first build. Mentions alone change no community.
        """
        graph, group = self._rt.graph, self._group
        state = graph.get_community_state(group)
        if state is None or state.community_count == 0:
            return None
        touched = list({f.id: f for f in facts}.values())
        endpoints = sorted({e for f in touched for e in (f.source_id, f.target_id)})
        if not endpoints:
            return UpkeepReport()
        now = utcnow()
        leaf_of = graph.community_of(group, endpoints, level=0)
        unassigned = [e for e in endpoints if e not in leaf_of]
        changed = (state.changed_entities + len(unassigned) + state.changed_facts + len(touched))
        if needs_rebuild(changed, state.entity_count + state.fact_count,
                         self._rt.settings.community_rebuild_threshold):
            self.build()
            return UpkeepReport(rebuilt=True)
        parents: dict[str, str | None] = {}
        assigned = self._assign(unassigned, leaf_of, parents, now)
        stale = stale_communities(endpoints, leaf_of, lambda c: self._parent(c, parents))
        graph.mark_stale(group, stale)
        self._publish([CommunityUpdated(group_id=group, timestamp=now, community_id=c.id,
                                        level=c.level, entity_count=c.entity_count,
                                        summary_stale=True)
                       for c in self._get_many(stale)])
        added_weight = sum(fact_weight(f.confidence, len(f.episodes)) for f in touched
                           if is_current(f, now) and len(f.episodes) == 1)
        graph.save_community_state(state.model_copy(update={
            "changed_entities": state.changed_entities + len(assigned),
            "changed_facts": state.changed_facts + len(touched),
            "total_weight": state.total_weight + added_weight,
            "updated_at": now}))
        report = UpkeepReport(assigned=assigned, stale=stale)
        if self._rt.settings.community_inline_summaries:
            report.resummarized = self.refresh(stale)
        log.info("communities.upkeep", group=group, assigned=len(assigned), stale=len(stale),
                 resummarized=len(report.resummarized))
        return report

    def _assign(self, unassigned: Sequence[str], leaf_of: dict[str, str],
                parents: dict[str, str | None], now: datetime) -> dict[str, str]:
        if not unassigned:
            return {}
        graph, group = self._rt.graph, self._group
        hits = graph.expand_facts(group, unassigned, depth=1, limit=FACT_SCAN_LIMIT,
                                  skip_methods=DERIVED_METHODS)
        adjacency: dict[str, list[tuple[str, float]]] = {}
        for hit in hits:
            fact = hit.fact
            if not is_current(fact, now) or fact.source_id == fact.target_id:
                continue
            weight = fact_weight(fact.confidence, len(fact.episodes))
            adjacency.setdefault(fact.source_id, []).append((fact.target_id, weight))
            adjacency.setdefault(fact.target_id, []).append((fact.source_id, weight))
        neighbours = sorted({n for e in unassigned for n, _ in adjacency.get(e, ())} - set(leaf_of))
        leaf_of.update(graph.community_of(group, neighbours, level=0))
        assigned = assign_new_entities(unassigned, adjacency, leaf_of)
        pairs = [(c, entity) for entity, leaf in sorted(assigned.items())
                 for c in with_ancestors([leaf], lambda c: self._parent(c, parents))]
        graph.add_community_members(group, pairs)
        leaf_of.update(assigned)
        return assigned

    def _parent(self, community_id: str, cache: dict[str, str | None]) -> str | None:
        if community_id not in cache:
            found = self._rt.graph.get_community(self._group, community_id)
            cache[community_id] = found.parent_id if found else None
        return cache[community_id]

    def _get_many(self, ids: Iterable[str]) -> list[Community]:
        found = (self._rt.graph.get_community(self._group, i) for i in ids)
        return [c for c in found if c is not None]

    def refresh(self, community_ids: Sequence[str] | None = None) -> list[str]:
        """Regenerate stale summaries (all stale ones, or the stale ones among the ids)."""
        graph, group = self._rt.graph, self._group
        state = graph.get_community_state(group)
        if state is None:
            return []
        if community_ids is None:
            targets = [c for c in graph.list_communities(group) if c.summary_stale]
        else:
            targets = [c for c in self._get_many(dict.fromkeys(community_ids)) if c.summary_stale]
        if not targets:
            return []
        now = utcnow()
        titles: dict[str, str] = {}
        updated: list[Community] = []
        for community in sorted(targets, key=lambda c: (c.level, c.id)):  # children first
            members = [entity_view(e) for e in graph.get_entities(group, community.entity_ids)]
            hits = graph.expand_facts(group, community.entity_ids, depth=1,
                                      limit=FACT_SCAN_LIMIT, skip_methods=DERIVED_METHODS)
            facts = [fact_view(h.fact) for h in hits if is_current(h.fact, now)]
            children = [titles.get(c) or self._name(c) for c in community.child_ids]
            metrics, report = summarize_members(
                members, facts, level=community.level, total_weight=state.total_weight,
                resolution=state.resolution, summarizer=self._summarizer, children=children)
            fresh = apply_summary(community, metrics, report, self._summarizer.name, now)
            fresh = fresh.model_copy(update={"entity_count": len(community.entity_ids)})
            titles[fresh.id] = fresh.name
            updated.append(fresh)
        graph.upsert_communities(updated)
        self._embed(updated)
        self._publish([CommunityUpdated(group_id=group, timestamp=now, community_id=c.id,
                                        level=c.level, entity_count=c.entity_count,
                                        summary_stale=False) for c in updated])
        return [c.id for c in updated]

    def _name(self, community_id: str) -> str:
        found = self._rt.graph.get_community(self._group, community_id)
        return found.name if found else community_id

    # ------------------------------------------------------------------ reads

    def status(self) -> CommunityStatus:
        settings = self._rt.settings
        state = self._rt.graph.get_community_state(self._group)
        common = {"group_id": self._group, "rebuild_threshold": settings.community_rebuild_threshold,
                  "resolution": settings.community_resolution,
                  "max_size": settings.community_max_size, "seed": settings.community_seed}
        if state is None:
            return CommunityStatus(built=False, **common)  # type: ignore[arg-type]
        communities = self._rt.graph.list_communities(self._group)
        common.update(resolution=state.resolution, max_size=state.max_size, seed=state.seed)
        return CommunityStatus(
            built=True, built_at=state.built_at, communities=len(communities),
            levels=state.levels, per_level=_per_level(communities),
            stale=sum(1 for c in communities if c.summary_stale), entities=state.entity_count,
            facts=state.fact_count, modularity=state.modularity,
            changed_share=round(state.changed_share, 6), **common)  # type: ignore[arg-type]

    def communities(self, level: int | None = None) -> list[Community]:
        return self._rt.graph.list_communities(self._group, level)

    def detail(self, community_id: str) -> CommunityDetail | None:
        graph, group = self._rt.graph, self._group
        community = graph.get_community(group, community_id)
        if community is None:
            return None
        entities = sorted(graph.get_entities(group, community.entity_ids),
                          key=lambda e: (e.name.lower(), e.id))
        facts = graph.get_facts(group, community.key_facts)
        parent = graph.get_community(group, community.parent_id) if community.parent_id else None
        return CommunityDetail(
            community=community,
            entities=[EntityRef(id=e.id, name=e.name, type=e.type.value) for e in entities],
            key_facts=[FactRef(id=f.id, type=f.type.value, fact=f.fact, source=f.source_id,
                               target=f.target_id, episodes=f.episodes, invalid_at=f.invalid_at)
                       for f in facts],
            parent=_ref(parent) if parent else None,
            children=[_ref(c) for c in self._get_many(community.child_ids)],
        )

    # ------------------------------------------------------------------ helpers

    def _embed(self, communities: Sequence[Community], progress: StepProgress | None = None
               ) -> None:
        batch = 256
        total = len(communities)
        for start in range(0, total, batch):
            chunk = communities[start:start + batch]
            vectors = self._rt.embedder.embed([f"{c.name}\n{c.summary}" for c in chunk])
            self._rt.vectors.upsert(Collection.COMMUNITIES, [
                VectorPoint(id=c.id, vector=v, group_id=self._group,
                            payload={"level": c.level, "entity_count": c.entity_count,
                                     "name": c.name})
                for c, v in zip(chunk, vectors, strict=True)])
            if progress:
                progress("embed", min(total, start + batch), total)

    def _publish(self, events: Sequence[CommunityUpdated | CommunitiesRebuilt]) -> None:
        """Best effort: the graph is the source of truth; a queue outage is logged."""
        if not events:
            return
        try:
            queue = self._rt.events
            for event in events:
                queue.publish(COMMUNITY_TOPIC, event)
        except (redis.RedisError, OSError) as exc:
            log.warning("communities.events_unpublished", group=self._group, count=len(events),
                        error=str(exc))
