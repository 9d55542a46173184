"""Late chunking (a fact sentence pooled from its passage's token vectors) and the rules that
keep a batch from re-embedding what did not change (issue 9)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pytest

from knotwork.domain.models import Entity, EntityType, Episode, Fact, RelationType
from knotwork.domain.ports import SpanEmbedder
from knotwork.infra.embeddings.hashing import HashingEmbedder
from knotwork.infra.embeddings.spans import PlainPassages, embed_passages
from knotwork.ingestion.embedding_text import ENTITY_TEXT_SENTENCES, entity_text
from knotwork.ingestion.extraction.types import LocalEntity, Mention
from knotwork.ingestion.passage_work import PassageWork, PendingPassages
from knotwork.ingestion.vector_writes import (
    passage_embedder,
    passage_rows,
    plan_vectors,
    sentence_rows,
)
from knotwork.resolution.ingest import mention_text

WHEN = datetime(2024, 5, 1, tzinfo=UTC)
PAGE = (
    "The Payments Team owns the checkout flow. Priya Raman leads Project Atlas. "
    "The Billing Service depends on PostgreSQL. The team meets on Mondays in Berlin."
)
SENTENCES = [
    "The Payments Team owns the checkout flow.",
    "Priya Raman leads Project Atlas.",
    "The Billing Service depends on PostgreSQL.",
    "The team meets on Mondays in Berlin.",
]


class PlainEmbedder:
    """An embedder without the late-chunking part."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(32)

    @property
    def dimension(self) -> int:
        return 32

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.inner.embed(texts)


def _episode(eid: str, content: str, doc: str = "d1") -> Episode:
    return Episode(
        id=eid,
        group_id="g",
        name="n",
        content=content,
        document_id=doc,
        valid_at=WHEN,
        created_at=WHEN,
    )


def _entity(summary: str = "", confidence: float = 0.8, name: str = "Priya Raman") -> Entity:
    return Entity(
        id="e1",
        group_id="g",
        name=name,
        canonical_name=name.lower(),
        type=EntityType.PERSON,
        summary=summary,
        confidence=confidence,
        created_at=WHEN,
        updated_at=WHEN,
    )


def _fact(
    text: str = "Priya Raman leads Project Atlas.", invalid_at: datetime | None = None
) -> Fact:
    return Fact(
        id="f1",
        group_id="g",
        source_id="e1",
        target_id="e2",
        type=RelationType.LEADS,
        fact=text,
        episodes=["c1"],
        valid_at=WHEN,
        invalid_at=invalid_at,
        created_at=WHEN,
    )


# ------------------------------------------------------------------ the port


def test_hashing_spans_are_the_span_text_embedded() -> None:
    emb = HashingEmbedder(64)
    assert isinstance(emb, SpanEmbedder)
    texts = ["Title\n" + PAGE, "other passage"]
    passages = embed_passages(emb, texts)
    assert passages.vectors == emb.embed(texts)
    start = texts[0].index(SENTENCES[1])
    assert passages.span_vector(0, start, start + len(SENTENCES[1])) == emb.embed([SENTENCES[1]])[0]


def test_an_embedder_without_spans_gets_plain_passages_and_no_span() -> None:
    emb = PlainEmbedder()
    assert not isinstance(emb, SpanEmbedder)
    passages = embed_passages(emb, [PAGE])
    assert isinstance(passages, PlainPassages)
    assert passages.vectors == emb.embed([PAGE])
    assert passages.span_vector(0, 0, 10) is None


def test_a_sentence_is_looked_up_in_its_own_episodes_passages_only() -> None:
    emb = HashingEmbedder(64)
    rows = passage_rows({"d1": "Title", "d2": "Other"},
                        [_episode("c1", PAGE), _episode("c2", "Nothing here.", "d2")], 200)
    # the ingestion path: one passage per part, so each span is read through the joined parts
    work = PassageWork([text for _, _, text, _ in rows], passage_embedder(emb, True), part_rows=1)
    batch = PendingPassages(rows, work).result()
    assert [(e.id, i) for e, i, _ in batch.points()] == [("c1", 0), ("c2", 0)]
    assert batch.sentence_vector(["c1"], SENTENCES[2]) == emb.embed([SENTENCES[2]])[0]
    assert batch.sentence_vector(["c2"], SENTENCES[2]) is None  # not in that episode
    assert batch.sentence_vector(["c1"], "Priya Raman leads Project Orion.") is None  # fallback
    kept = batch.of_documents({"d2"})
    assert [e.id for e, _, _ in kept.points()] == ["c2"]
    assert kept.sentence_vector(["c1"], SENTENCES[2]) is None


def test_candidate_sentences_in_a_passage_are_pooled_and_the_rest_embedded_once() -> None:
    emb = HashingEmbedder(64)
    episodes = [_episode("c1", PAGE), _episode("c2", "Jo Park runs the Oslo office.", "d2")]
    # the passages of the first episode only: the second's sentences are not in any
    rows = passage_rows({"d1": "Title"}, episodes[:1], 200)
    plain = sentence_rows(episodes, len(rows))
    pooled = sentence_rows(episodes, len(rows), rows)
    assert [s.text for s in pooled] == [s.text for s in plain]
    assert all(s.row is not None for s in plain)
    own = [s for s in pooled if s.row is not None]
    assert {s.episode.id for s in own} == {"c2"}
    assert [s.row for s in own] == list(range(len(rows), len(rows) + len(own)))
    work = PassageWork([text for _, _, text, _ in rows] + [s.text for s in own],
                       passage_embedder(emb, True), part_rows=1)
    batch = PendingPassages(rows, work, pooled).result()
    embedded: list[str] = []

    def fallback(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return emb.embed(texts)

    points = {p.id: p.vector for p in batch.sentence_points(fallback)}
    assert len(points) == len(pooled) and not embedded
    # a pooled sentence's vector is its span of the passage (hashing: the span's own text)
    first = next(s for s in pooled if s.first == SENTENCES[1] and s.last == SENTENCES[1])
    assert first.row is None
    from knotwork.retrieval.evidence_text import sentence_vector_id
    assert points[sentence_vector_id("c1", first.text)] == emb.embed([SENTENCES[1]])[0]


def test_a_pooled_sentence_the_pass_cannot_give_is_embedded_when_written() -> None:
    emb = PlainEmbedder()  # no spans: nothing can be pooled
    episodes = [_episode("c1", PAGE)]
    rows = passage_rows({"d1": "Title"}, episodes, 200)
    pooled = sentence_rows(episodes, len(rows), rows)
    work = PassageWork([text for _, _, text, _ in rows], passage_embedder(emb, True))
    batch = PendingPassages(rows, work, pooled).result()
    embedded: list[str] = []

    def fallback(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return emb.embed(texts)

    points = batch.sentence_points(fallback)
    assert len(points) == len(pooled) and embedded == [s.text for s in pooled]


# ------------------------------------------------------------------ skip rules


def test_a_confidence_change_rewrites_the_payload_not_the_vector() -> None:
    before = _entity("Priya Raman leads Project Atlas.", confidence=0.7)
    plan = plan_vectors(
        [_entity("Priya Raman leads Project Atlas.", confidence=0.9)], {"e1": before}, [], {}
    )
    assert plan.entities == [] and [e.id for e in plan.entity_payloads] == ["e1"]


def test_summary_sentences_past_the_second_do_not_change_the_vector() -> None:
    assert ENTITY_TEXT_SENTENCES == 2
    two = "Priya Raman leads Project Atlas. Priya Raman works in Berlin."
    before = _entity(two)
    grown = _entity(two + " Priya Raman reports to Dana Lee.")
    plan = plan_vectors([grown], {"e1": before}, [], {})
    assert plan.entities == [] and plan.entity_payloads == []
    assert entity_text(grown) == entity_text(before) == f"Priya Raman (person). {two}"
    changed = _entity("Priya Raman works in Berlin. Priya Raman reports to Dana Lee.")
    assert plan_vectors([changed], {"e1": before}, [], {}).entities == [changed]
    assert plan_vectors([before], {}, [], {}).entities == [before]  # new entity


def test_an_ended_fact_keeps_its_vector_and_a_new_sentence_is_embedded() -> None:
    ended = _fact(invalid_at=datetime(2025, 1, 1, tzinfo=UTC))
    plan = plan_vectors([], {}, [ended], {"f1": _fact()})
    assert plan.facts == [] and plan.fact_payloads == [ended]
    assert plan_vectors([], {}, [_fact()], {"f1": _fact()}).fact_payloads == []
    reworded = _fact("Priya Raman runs Project Atlas.")
    assert plan_vectors([], {}, [reworded], {"f1": _fact()}).facts == [reworded]


def test_mention_text_reads_as_many_sentences_as_entity_text() -> None:
    content = (
        "Priya Raman leads Atlas. Priya Raman works in Berlin. Priya Raman reports to Dana Lee."
    )
    mentions = [
        Mention(
            start=content.index("Priya", i),
            end=content.index("Priya", i) + 11,
            text="Priya Raman",
            type=EntityType.PERSON,
            confidence=0.9,
            extractor="spacy",
        )
        for i in (0, 24, 53)
    ]
    ent = LocalEntity(
        name="Priya Raman",
        key="priya raman",
        type=EntityType.PERSON,
        subtype=None,
        confidence=0.9,
        mentions=mentions,
    )
    assert mention_text(ent, content) == (
        "Priya Raman (person). Priya Raman leads Atlas. Priya Raman works in Berlin."
    )


# ------------------------------------------------------------------ MiniLM


@pytest.mark.models
def test_minilm_passages_are_unchanged_and_spans_pool_close_to_a_direct_embed() -> None:
    from knotwork.infra.embeddings.minilm import MiniLMEmbedder

    emb = MiniLMEmbedder()
    texts = ["Payments Team\n" + PAGE, "Weekly notes\nCarlos Mendes reports to Dana Whitfield."]
    passages = emb.embed_passages(texts)
    direct = np.array(MiniLMEmbedder().embed(texts))  # a fresh cache: the model's own pass
    assert np.allclose(np.array(passages.vectors), direct, atol=1e-5)
    pooled = []
    for sentence in SENTENCES:
        at = texts[0].index(sentence)
        vector = passages.span_vector(0, at, at + len(sentence))
        assert vector is not None
        pooled.append(vector)
    alone = np.array(MiniLMEmbedder().embed(SENTENCES))
    cosines = np.diag(np.array(pooled) @ alone.T)
    # close, not equal: the pooled tokens read their context
    assert float(cosines.mean()) > 0.7 and float(cosines.max()) > 0.85
    assert float(cosines.min()) > 0.4
    cached = emb.embed_passages(texts[:1])  # served from the cache: no token vectors
    assert cached.vectors[0] == passages.vectors[0]
    assert cached.span_vector(0, 0, 10) is None


@pytest.mark.models
def test_minilm_span_past_the_truncation_has_no_vector() -> None:
    from knotwork.infra.embeddings.minilm import MiniLMEmbedder

    long = " ".join(["filler words here."] * 200) + " Priya Raman leads Project Atlas."
    passages = MiniLMEmbedder().embed_passages([long])
    at = long.index("Priya")
    assert passages.span_vector(0, at, len(long)) is None
    assert passages.span_vector(0, 0, 18) is not None


# ------------------------------------------------------------------ threads


def test_one_core_is_left_to_the_other_thread_and_restored() -> None:
    torch = pytest.importorskip("torch")
    from knotwork.infra.embeddings.threads import one_core_left

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with one_core_left():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        torch.set_num_threads(1)
        with one_core_left():  # never below one
            assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
