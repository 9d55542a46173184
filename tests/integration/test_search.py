"""Per-layer hybrid search (BM25 + cosine + BFS, every reranker, temporal filters) on real
stores: FalkorDB with qdrant-edge + SQLite, and with qdrant-client + PostgreSQL. The graph,
vectors and chunks are written through the ports with the model-free hashing embedder."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from knotwork.domain.models import (
    Chunk,
    Document,
    Entity,
    EntityMention,
    EntityType,
    Episode,
    Fact,
    RelationType,
    SourceSystem,
)
from knotwork.domain.ports import Collection, VectorPoint
from knotwork.retrieval.search import HybridSearch
from knotwork.retrieval.search_config import (
    SEARCH_PRESETS,
    LayerConfig,
    Method,
    Reranker,
    SearchConfig,
)
from knotwork.runtime import Runtime, open_runtime
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration]
NOW = datetime(2025, 3, 1, tzinfo=UTC)
IDS = {k: str(uuid.uuid5(uuid.NAMESPACE_URL, k)) for k in
       ["priya", "atlas", "marcus", "kafka", "billing", "oldteam", "f_lead", "f_rep", "f_uses", "f_dep",
        "f_old", "c1", "c2", "d1", "d2"]}
NAMES = {"priya": ("Priya Raman", EntityType.PERSON), "atlas": ("Project Atlas", EntityType.PRODUCT),
         "marcus": ("Marcus Webb", EntityType.PERSON), "kafka": ("Apache Kafka", EntityType.TECHNOLOGY),
         "billing": ("Billing Service", EntityType.PRODUCT), "oldteam": ("Old Team", EntityType.ORGANIZATION)}
FACTS = {  # key: (source, type, target, text, episodes, valid_at, invalid_at)
    "f_lead": ("priya", RelationType.LEADS, "atlas", "Priya Raman leads Project Atlas.", 1, None, None),
    "f_rep": ("priya", RelationType.REPORTS_TO, "marcus", "Priya Raman reports to Marcus Webb.", 1, None, None),
    "f_uses": ("atlas", RelationType.USES, "kafka", "Project Atlas uses Apache Kafka for telemetry.", 3, None, None),
    "f_dep": ("atlas", RelationType.DEPENDS_ON, "billing", "Project Atlas depends on the Billing Service.", 1, None, None),
    "f_old": ("priya", RelationType.MEMBER_OF, "oldteam", "Priya Raman was a member of the Old Team.", 1,
              datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC)),
}
CHUNKS = {"c1": ("d1", "Project Atlas charter. Priya Raman leads Project Atlas, the telemetry platform.",
                 ["priya", "atlas"]),
          "c2": ("d2", "Billing Service runbook: restart the invoice workers when the queue stalls.",
                 ["billing"])}


def _populate(rt: Runtime, group: str) -> None:
    rt.graph.ensure_schema(group)
    entities = [Entity(id=IDS[k], group_id=group, name=n, canonical_name=n.lower(), type=t,
                       name_keys=[n.lower()], evidence_count=3 if k == "atlas" else 1,
                       created_at=NOW, updated_at=NOW) for k, (n, t) in NAMES.items()]
    facts = [Fact(id=IDS[k], group_id=group, source_id=IDS[s], target_id=IDS[d], type=r, fact=text,
                  episodes=[f"ep{i}" for i in range(n)], valid_at=va, invalid_at=ia, created_at=NOW)
             for k, (s, r, d, text, n, va, ia) in FACTS.items()]
    rt.graph.upsert_entities(entities)
    rt.graph.upsert_facts(facts)
    for key, (doc, text, mentioned) in CHUNKS.items():
        document = Document(id=IDS[doc], group_id=group, source_system=SourceSystem.FILE, source_id=doc,
                            title=doc, content_hash=doc, created_at=NOW)
        chunk = Chunk(id=IDS[key], document_id=IDS[doc], group_id=group, index=0, content=text,
                      start_offset=0, end_offset=len(text), token_count=len(text.split()))
        rt.documents.save_document(document, [chunk])
        rt.graph.upsert_episodes([Episode(id=IDS[key], group_id=group, name=doc, content=text,
                                          document_id=IDS[doc], valid_at=NOW, created_at=NOW)])
        rt.documents.add_mentions([EntityMention(
            id=f"{key}-{m}", group_id=group, chunk_id=IDS[key], entity_id=IDS[m], span_start=0,
            span_end=1, text=m, extractor="test", confidence=1.0) for m in mentioned])
    embed = rt.embedder.embed

    def points(pairs: list[tuple[str, str]], payload: bool = False) -> list[VectorPoint]:
        return [VectorPoint(id=i, vector=v, group_id=group, payload={"chunk_id": i} if payload else {})
                for (i, _), v in zip(pairs, embed([t for _, t in pairs]), strict=True)]

    rt.vectors.upsert(Collection.ENTITIES, points([(e.id, e.name) for e in entities]))
    rt.vectors.upsert(Collection.FACTS, points([(f.id, f.fact) for f in facts]))
    rt.vectors.upsert(Collection.CHUNKS, points([(IDS[k], t) for k, (_, t, _) in CHUNKS.items()], True))


@pytest.fixture(params=["embedded", "production"])
def search(request: pytest.FixtureRequest, make_settings: SettingsFactory) -> Iterator[HybridSearch]:
    if request.param == "embedded":
        settings = make_settings(embedder="hashing")
    else:
        postgres_url = request.getfixturevalue("postgres_url")
        settings = make_settings(database_url=postgres_url, vectors="memory", embedder="hashing")
    rt = open_runtime(settings)
    try:
        _populate(rt, settings.group)
        yield HybridSearch(rt, settings.group)
    finally:
        rt.graph.delete_group(settings.group)
        rt.close()


def _ids(results: list) -> list[str]:  # type: ignore[type-arg]
    names = {v: k for k, v in IDS.items()}
    return [names.get(getattr(r.item, "id", ""), "?") for r in results]


def test_combined_hybrid_search_every_layer(search: HybridSearch) -> None:
    out = search.search("Who leads Project Atlas?", SEARCH_PRESETS["combined_hybrid_rrf"])
    assert _ids(out.facts)[0] == "f_lead"
    assert "f_old" not in _ids(out.facts)  # invalidated: left out by default
    assert {"priya", "atlas"} <= set(_ids(out.entities)[:3])
    assert _ids(out.chunks)[0] == "c1"
    assert out.communities == []  # none built
    scores = [s.score for s in out.facts]
    assert scores == sorted(scores, reverse=True)


def test_temporal_filters(search: HybridSearch) -> None:
    base = LayerConfig(methods=(Method.BM25, Method.COSINE, Method.BFS), limit=10)
    q = "Which team was Priya Raman a member of?"
    assert "f_old" not in _ids(search.search(q, SearchConfig(facts=base, entities=None)).facts)
    assert "f_old" in _ids(search.search(q, SearchConfig(facts=base, entities=None, include_invalid=True)).facts)
    then = search.search(q, SearchConfig(facts=base, entities=None, as_of=datetime(2023, 6, 1, tzinfo=UTC)))
    assert _ids(then.facts)[0] == "f_old"
    later = search.search(q, SearchConfig(facts=base, entities=None, as_of=datetime(2024, 6, 1, tzinfo=UTC)))
    assert "f_old" not in _ids(later.facts)


def test_graph_rerankers(search: HybridSearch) -> None:
    q = "Project Atlas Priya Raman"
    near = search.search(q, SEARCH_PRESETS["edge_hybrid_node_distance"], center_entity_id=IDS["marcus"])
    assert _ids(near.facts)[0] == "f_rep"  # touches the center
    assert near.facts[0].score == 1.0 and near.facts[-1].score < 1.0
    with pytest.raises(ValueError, match="center entity"):
        search.search(q, SEARCH_PRESETS["edge_hybrid_node_distance"])
    mentions = search.search("Project Atlas", SEARCH_PRESETS["edge_hybrid_episode_mentions"])
    assert _ids(mentions.facts)[0] == "f_uses" and mentions.facts[0].score == 3.0
    scored = search.search("Project Atlas", SEARCH_PRESETS["node_scored"])
    assert all(0.0 <= s.score <= 1.0 for s in scored.entities)
    assert _ids(scored.entities)[0] == "atlas"  # similar and most salient
    mmr = search.search("Project Atlas", SearchConfig(
        facts=LayerConfig(reranker=Reranker.MMR, mmr_lambda=0.5, limit=2), entities=None))
    assert len(mmr.facts) == 2
    # no LLM configured: the cross-encoder reranker keeps the fused order
    fused = search.search("Who leads Project Atlas?", SearchConfig(facts=LayerConfig(), entities=None))
    judged = search.search("Who leads Project Atlas?", SearchConfig(
        facts=LayerConfig(reranker=Reranker.CROSS_ENCODER), entities=None))
    assert _ids(judged.facts)[0] == _ids(fused.facts)[0] == "f_lead"
    assert sorted(_ids(judged.facts)) == sorted(_ids(fused.facts))
    with pytest.raises(ValueError, match="empty"):
        search.search("  ", SEARCH_PRESETS["combined_hybrid_rrf"])
