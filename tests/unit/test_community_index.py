"""The in-process community index ranks exactly like scoring every community, sparsely, and
is reused until the next full build; the evidence vector memo embeds each text once."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

from knotwork.domain.models import Community, CommunityState
from knotwork.retrieval.community_index import CommunityIndex, community_index
from knotwork.retrieval.config import GlobalSearchConfig
from knotwork.retrieval.global_rank import choose_level, community_text, score_communities
from knotwork.retrieval.lexical import bm25_scores
from knotwork.retrieval.vector_cache import embed_cached

NOW = datetime(2025, 3, 20, tzinfo=UTC)
WORDS = ["billing", "service", "outage", "platform", "team", "atlas", "telemetry", "kafka",
         "migration", "payments", "roster", "incident", "launch", "deadline", "search", "api"]


def _hierarchy(seed: int) -> list[Community]:
    rng = random.Random(seed)
    out: list[Community] = []
    roots = [f"r{i}" for i in range(3)]
    for rid in roots:
        kids = [f"{rid}c{j}" for j in range(rng.randint(1, 5))]
        out.append(Community(id=rid, group_id="g", level=1, name=" ".join(rng.sample(WORDS, 2)),
                             summary=" ".join(rng.choices(WORDS, k=12)), child_ids=kids,
                             entity_count=rng.randint(4, 20), created_at=NOW, updated_at=NOW))
        out += [Community(id=k, group_id="g", level=0, name=" ".join(rng.sample(WORDS, 2)),
                          summary=" ".join(rng.choices(WORDS, k=rng.randint(3, 20))),
                          key_topics=rng.sample(WORDS, 2), parent_id=rid, entity_count=3,
                          created_at=NOW, updated_at=NOW) for k in kids]
    # a leaf with no parent is in the partition of every level
    out.append(Community(id="lone", group_id="g", level=0, name="lone kafka", summary="kafka",
                         entity_count=2, created_at=NOW, updated_at=NOW))
    return out


def test_sparse_bm25_and_level_fit_match_scoring_every_community() -> None:
    cfg = GlobalSearchConfig()
    for seed in range(5):
        communities = _hierarchy(seed)
        index = CommunityIndex(communities)
        for question in ["Which team had a billing outage?", "kafka migration deadline",
                         "what about telemetry and the api search", "xyzzy"]:
            full = bm25_scores(question, [community_text(c) for c in communities])
            sparse = index.bm25(question)
            for c, score in zip(communities, full, strict=True):
                assert abs(sparse.get(c.id, 0.0) - score) < 1e-9
            vector = {c.id: random.Random(seed).random() for c in communities[::3]}
            reference = score_communities(question, communities, vector, cfg)
            relevance = {cid: s for cid, s in reference.items() if s > 0}
            level, fits = choose_level(communities, reference, cfg)
            mine = {lvl: round(index.level_fit(relevance, lvl, cfg.level_fit_top), 6)
                    for lvl in index.levels}
            assert mine == fits
            assert min(lvl for lvl, f in mine.items() if f >= max(mine.values()) - 1e-9) == level


def test_the_index_is_reused_until_the_build_record_changes() -> None:
    class Graph:  # any weak-referenceable store object
        pass

    graph, loads = Graph(), []

    def load() -> list[Community]:
        loads.append(1)
        return _hierarchy(1)

    state = CommunityState(group_id="g", built_at=NOW, entity_count=1, fact_count=1,
                           community_count=5, levels=2, updated_at=NOW)
    first = community_index(graph, "g", state, load, ttl=300)
    assert community_index(graph, "g", state, load, ttl=300) is first and len(loads) == 1
    upkeep = state.model_copy(update={"updated_at": NOW + timedelta(seconds=1), "changed_facts": 3})
    assert community_index(graph, "g", upkeep, load, ttl=300) is first and len(loads) == 1
    changed = state.model_copy(update={"built_at": NOW + timedelta(seconds=1)})
    assert community_index(graph, "g", changed, load, ttl=300) is not first and len(loads) == 2
    second = community_index(graph, "g", changed, load, ttl=300)
    assert community_index(graph, "g", changed, load, ttl=0) is second  # expired: still served
    for _ in range(500):  # ...while a background thread reloads it
        if community_index(graph, "g", changed, load, ttl=300) is not second:
            break
        time.sleep(0.01)
    assert community_index(graph, "g", changed, load, ttl=300) is not second
    assert len(loads) == 3
    community_index(Graph(), "g", changed, load, ttl=300)  # another store: its own index
    assert len(loads) == 4


def test_evidence_vectors_are_embedded_once_per_text() -> None:
    class Embedder:
        dimension = 2

        def __init__(self) -> None:
            self.seen: list[str] = []

        def embed(self, texts: list[str]) -> list[list[float]]:
            self.seen += texts
            return [[float(len(t)), 1.0] for t in texts]

    emb = Embedder()
    first = embed_cached(emb, ["ab", "c", "ab"])
    second = embed_cached(emb, ["c", "def"])
    assert [list(v) for v in first] == [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    assert [list(v) for v in second] == [[1.0, 1.0], [3.0, 1.0]]
    assert emb.seen == ["ab", "c", "def"]
    other = Embedder()  # another embedder never reuses these vectors
    embed_cached(other, ["ab"])
    assert other.seen == ["ab"]
