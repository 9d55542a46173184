"""The analyst digest: top communities at a level, their key entities and cited facts, what
changed since the last report, and a community map. Rendering lives in ``render``.

The report-state record (entity ids and current fact ids at the last report) and the latest
report are kept per tenant under ``<data_dir>/reports/<group>/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from knotwork.communities.detection import cut
from knotwork.communities.layout import MapEdge, MapNode, community_map
from knotwork.communities.projection import is_current
from knotwork.domain.models import Community, Entity, Fact
from knotwork.domain.timeutil import utcnow

if TYPE_CHECKING:
    from knotwork.runtime import Runtime

STATE_FILE = "state.json"
LATEST_JSON = "latest.json"
TOP_COMMUNITIES = 12
MAP_COMMUNITIES = 60
MAX_CHANGES = 50


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CitationRef(_Model):
    episode_id: str
    document_id: str | None = None
    title: str = ""
    source_system: str = ""
    source_id: str = ""
    url: str | None = None


class ReportEntity(_Model):
    id: str
    name: str
    type: str


class ReportFact(_Model):
    id: str
    type: str
    text: str
    invalid_at: datetime | None = None
    citations: list[CitationRef] = Field(default_factory=list)


class ReportCommunity(_Model):
    id: str
    name: str
    level: int
    entity_count: int
    summary: str
    key_topics: list[str]
    key_entities: list[ReportEntity]
    facts: list[ReportFact]
    summary_stale: bool
    modularity_contribution: float
    internal_density: float
    external_connectivity: float


class ReportChanges(_Model):
    since: datetime | None = None
    new_entities: list[ReportEntity] = Field(default_factory=list)
    new_entity_count: int = 0
    invalidated_facts: list[ReportFact] = Field(default_factory=list)
    invalidated_count: int = 0
    new_fact_count: int = 0


class Report(_Model):
    group_id: str
    generated_at: datetime
    level: int
    max_level: int
    community_count: int  # in the partition at ``level``
    communities: list[ReportCommunity]
    changes: ReportChanges
    map_nodes: list[MapNode]
    map_edges: list[MapEdge]


class ReportState(_Model):
    group_id: str
    generated_at: datetime
    entity_ids: list[str]
    current_fact_ids: list[str]


_GROUP = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def report_dir(data_dir: Path, group_id: str) -> Path:
    if not _GROUP.fullmatch(group_id):
        raise ValueError(f"invalid group id {group_id!r}: expected 1-64 of [A-Za-z0-9_-]")
    return Path(data_dir) / "reports" / group_id


def load_state(directory: Path) -> ReportState | None:
    try:
        return ReportState.model_validate_json((directory / STATE_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None


def load_latest(directory: Path) -> Report | None:
    try:
        return Report.model_validate_json((directory / LATEST_JSON).read_text("utf-8"))
    except (OSError, ValueError):
        return None


def save_latest(directory: Path, report: Report, state: ReportState) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, body in ((LATEST_JSON, report.model_dump_json()),
                       (STATE_FILE, state.model_dump_json())):
        tmp = directory / (name + ".tmp")
        tmp.write_text(body, "utf-8")
        tmp.replace(directory / name)


def partition(communities: Sequence[Community], level: int) -> list[Community]:
    """The communities forming the partition at ``level`` (see ``detection.cut``)."""
    levels = {c.id: c.level for c in communities}
    return cut([(c.level, c.parent_id, c) for c in communities], level, levels)


def build_report(rt: Runtime, group_id: str, level: int | None = None,
                 top: int = TOP_COMMUNITIES, now: datetime | None = None
                 ) -> tuple[Report, ReportState]:
    """The digest as data, plus the state to record if it is published."""
    now = now or utcnow()
    graph = rt.graph
    communities = graph.list_communities(group_id)
    if not communities:
        raise ValueError("no communities yet: run `knotwork communities build` first")
    max_level = max(c.level for c in communities)
    chosen = max_level if level is None else level
    if chosen < 0 or chosen > max_level:
        raise ValueError(f"level must be between 0 and {max_level}, got {level}")
    parts = sorted(partition(communities, chosen),
                   key=lambda c: (-c.entity_count, -c.modularity_contribution, c.id))
    entities = {e.id: e for e in graph.list_entities(group_id)}
    facts = [f for f in graph.list_facts(group_id) if not f.derived]
    current = [f for f in facts if is_current(f, now)]
    by_id = {f.id: f for f in facts}
    previous = load_state(report_dir(rt.settings.data_dir, group_id))
    changes = _changes(previous, entities, facts, current)
    shown = parts[:top]
    cited = [by_id[i] for c in shown for i in c.key_facts if i in by_id]
    citations = _citations(rt, group_id, cited + [by_id[f.id] for f in changes.invalidated_facts])
    report_communities = [_community(c, entities, by_id, citations) for c in shown]
    changes.invalidated_facts = [_fact(by_id[f.id], citations) for f in changes.invalidated_facts]
    nodes, edges = community_map(parts[:MAP_COMMUNITIES], current)
    report = Report(group_id=group_id, generated_at=now, level=chosen, max_level=max_level,
                    community_count=len(parts), communities=report_communities,
                    changes=changes, map_nodes=nodes, map_edges=edges)
    state = ReportState(group_id=group_id, generated_at=now, entity_ids=sorted(entities),
                        current_fact_ids=sorted(f.id for f in current))
    return report, state


def _changes(previous: ReportState | None, entities: dict[str, Entity], facts: Sequence[Fact],
             current: Sequence[Fact]) -> ReportChanges:
    if previous is None:
        return ReportChanges()
    known = set(previous.entity_ids)
    was_current = set(previous.current_fact_ids)
    now_current = {f.id for f in current}
    new_entities = sorted((e for i, e in entities.items() if i not in known),
                          key=lambda e: (e.name.lower(), e.id))
    invalidated = sorted((f for f in facts if f.id in was_current and f.id not in now_current),
                         key=lambda f: (f.invalid_at is None, f.invalid_at, f.id))
    return ReportChanges(
        since=previous.generated_at,
        new_entities=[ReportEntity(id=e.id, name=e.name, type=e.type.value)
                      for e in new_entities[:MAX_CHANGES]],
        new_entity_count=len(new_entities),
        invalidated_facts=[ReportFact(id=f.id, type=f.type.value, text=f.fact,
                                      invalid_at=f.invalid_at) for f in invalidated[:MAX_CHANGES]],
        invalidated_count=len(invalidated),
        new_fact_count=len(now_current - was_current),
    )


def _citations(rt: Runtime, group_id: str, facts: Sequence[Fact]) -> dict[str, CitationRef]:
    episode_ids = list(dict.fromkeys(e for f in facts for e in f.episodes))
    episodes = {ep.id: ep for ep in rt.graph.get_episodes(group_id, episode_ids)}
    documents = {d.id: d for d in rt.documents.get_documents(
        list(dict.fromkeys(ep.document_id for ep in episodes.values())))}
    out: dict[str, CitationRef] = {}
    for episode_id in episode_ids:
        episode = episodes.get(episode_id)
        document = documents.get(episode.document_id) if episode else None
        if document is None:
            out[episode_id] = CitationRef(episode_id=episode_id,
                                          title=episode.name if episode else "")
            continue
        out[episode_id] = CitationRef(
            episode_id=episode_id, document_id=document.id, title=document.title,
            source_system=document.source_system.value, source_id=document.source_id,
            url=document.url)
    return out


def _fact(fact: Fact, citations: dict[str, CitationRef]) -> ReportFact:
    return ReportFact(id=fact.id, type=fact.type.value, text=fact.fact, invalid_at=fact.invalid_at,
                      citations=[citations[e] for e in fact.episodes if e in citations])


def _community(community: Community, entities: dict[str, Entity], facts: dict[str, Fact],
               citations: dict[str, CitationRef]) -> ReportCommunity:
    key = list(dict.fromkeys(community.central_entities + community.representative_entities))
    return ReportCommunity(
        id=community.id, name=community.name, level=community.level,
        entity_count=community.entity_count, summary=community.summary,
        key_topics=community.key_topics,
        key_entities=[ReportEntity(id=i, name=entities[i].name, type=entities[i].type.value)
                      for i in key if i in entities],
        facts=[_fact(facts[i], citations) for i in community.key_facts if i in facts],
        summary_stale=community.summary_stale,
        modularity_contribution=community.modularity_contribution,
        internal_density=community.internal_density,
        external_connectivity=community.external_connectivity,
    )


def report_json(report: Report) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False)
