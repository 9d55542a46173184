"""From a projected graph to stored-ready :class:`Community` records (pure).

Detection, metrics and reports for every community of the hierarchy; also the one-community
refresh used by incremental upkeep, so both paths compute summaries the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from knotwork.communities.detection import Hierarchy, detect, modularity
from knotwork.communities.metrics import CommunityMetrics, community_metrics
from knotwork.communities.projection import EntityView, FactView, ProjectedGraph
from knotwork.communities.summaries import CommunityReport, CommunitySummarizer, SummaryInput
from knotwork.domain.ids import stable_id
from knotwork.domain.models import Community
from knotwork.settings import LeidenEngine

StepProgress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True, slots=True)
class BuildParams:
    resolution: float = 1.0
    max_size: int = 10
    seed: int = 42
    iterations: int = 2
    engine: LeidenEngine = LeidenEngine.IGRAPH


@dataclass(frozen=True, slots=True)
class BuiltCommunities:
    communities: list[Community]  # ordered by level descending, then id
    hierarchy: Hierarchy
    ids: list[str]  # hierarchy key -> community id
    modularity: float  # of the leaf partition
    total_weight: float


def community_id(group_id: str, level: int, member_ids: Iterable[str]) -> str:
    """Stable: the same members at the same level always get the same id."""
    digest = hashlib.sha256("\n".join(sorted(member_ids)).encode()).hexdigest()
    return stable_id(group_id, "community", str(level), digest)


def summarize_members(
    members: Sequence[EntityView],
    facts: Iterable[FactView],
    *,
    level: int,
    total_weight: float,
    resolution: float,
    summarizer: CommunitySummarizer,
    children: Sequence[str] = (),
) -> tuple[CommunityMetrics, CommunityReport]:
    """Metrics and report of one community from its members and the facts touching them."""
    touching = list(facts)
    metrics = community_metrics((m.id for m in members), touching, total_weight,
                                resolution=resolution)
    member_ids = {m.id for m in members}
    internal = [f for f in touching
                if f.source in member_ids and f.target in member_ids and f.source != f.target]
    report = summarizer.summarize(SummaryInput(
        level=level, members=members, central=metrics.central, centrality=metrics.centrality,
        facts=internal, children=children))
    return metrics, report


def apply_summary(community: Community, metrics: CommunityMetrics, report: CommunityReport,
                  summarizer: str, now: datetime) -> Community:
    """``community`` with new metrics and report, marked fresh (version + 1)."""
    return community.model_copy(update={
        "name": report.title,
        "summary": report.summary,
        "key_topics": list(report.key_topics),
        "key_facts": list(report.key_facts),
        "citations": list(report.citations),
        "central_entities": list(metrics.central),
        "representative_entities": list(metrics.representative),
        "modularity_contribution": metrics.modularity_contribution,
        "internal_density": metrics.internal_density,
        "external_connectivity": metrics.external_connectivity,
        "summary_stale": False,
        "summary_version": community.summary_version + 1,
        "summarizer": summarizer,
        "updated_at": now,
        "last_summarized_at": now,
    })


def build_communities(graph: ProjectedGraph, group_id: str, *, params: BuildParams,
                      summarizer: CommunitySummarizer, now: datetime,
                      progress: StepProgress | None = None) -> BuiltCommunities:
    """Detect the hierarchy, then compute metrics and a report for every community."""
    def step(stage: str, done: int, total: int) -> None:
        if progress is not None:
            progress(stage, done, total)

    step("detect", 0, 1)
    hierarchy = detect(graph, resolution=params.resolution, max_size=params.max_size,
                       seed=params.seed, iterations=params.iterations, engine=params.engine)
    step("detect", 1, 1)
    total_weight = graph.total_weight
    ids = [community_id(group_id, c.level, (graph.nodes[i] for i in c.members))
           for c in hierarchy.communities]
    incident: list[list[int]] = [[] for _ in graph.nodes]
    for k, fact in enumerate(graph.facts):
        incident[graph.index[fact.source]].append(k)
        incident[graph.index[fact.target]].append(k)
    titles: dict[int, str] = {}
    built: dict[int, Community] = {}
    order = sorted(hierarchy.communities, key=lambda c: (c.level, c.key))  # children first
    for done, detected in enumerate(order):
        members = [graph.entities[graph.nodes[i]] for i in detected.members]
        fact_ids = sorted({k for i in detected.members for k in incident[i]})
        metrics, report = summarize_members(
            members, (graph.facts[k] for k in fact_ids), level=detected.level,
            total_weight=total_weight, resolution=params.resolution, summarizer=summarizer,
            children=[titles[c] for c in detected.children])
        titles[detected.key] = report.title
        skeleton = Community(
            id=ids[detected.key], group_id=group_id, level=detected.level,
            parent_id=ids[detected.parent] if detected.parent is not None else None,
            child_ids=sorted(ids[c] for c in detected.children),
            entity_ids=sorted(m.id for m in members), entity_count=len(members),
            created_at=now, updated_at=now)
        built[detected.key] = apply_summary(skeleton, metrics, report, summarizer.name, now)
        if done % 200 == 0 or done + 1 == len(order):
            step("summarize", done + 1, len(order))
    communities = sorted(built.values(), key=lambda c: (-c.level, c.id))
    leaf_q = modularity(graph, hierarchy.membership(0), params.resolution) if graph.edges else 0.0
    return BuiltCommunities(communities, hierarchy, ids, leaf_q, total_weight)
