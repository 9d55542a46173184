"""What a batch embeds beyond its passages, and what it can reuse (issue 9).

- Chunk passages (:func:`passage_rows`) are embedded once (``ingestion.passage_work``)
  through the late-chunking port: a fact sentence found in a passage of its episode is
  pooled from that pass instead of being embedded again (``Settings.late_chunk_facts``).
- A changed entity or fact whose vector text did not change (a confidence, a validity, an
  ended fact) keeps its stored vector: only the payload is written again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from knotwork.domain.models import Entity, Episode, Fact
from knotwork.domain.ports import Collection, Embedder, PassageVectors, VectorPoint, VectorStore
from knotwork.infra.embeddings.spans import PlainPassages, embed_passages
from knotwork.ingestion.embedding_text import entity_text, passage_text, passage_texts
from knotwork.retrieval.evidence_text import evidence_texts, sentence_point

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Collection as Container

VectorsOf = Callable[[Collection, str, list[str]], dict[str, list[float]]]


@dataclass
class EmbeddedPassages:
    """A batch's passages: (episode, passage index, embedded text, row in ``handle``)."""

    rows: list[PassageRow]
    handle: PassageVectors
    # candidate sentences as local search embeds them: (episode, text, row in ``handle``)
    sentences: list[SentenceRow] = field(default_factory=list)
    _by_episode: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for episode, _, text, row in self.rows:
            self._by_episode.setdefault(episode.id, []).append((text, row))

    def of_documents(self, document_ids: Container[str]) -> EmbeddedPassages:
        return EmbeddedPassages(
            [r for r in self.rows if r[0].document_id in document_ids], self.handle,
            [r for r in self.sentences if r[0].document_id in document_ids],
        )

    def points(self) -> list[tuple[Episode, int, list[float]]]:
        vectors = self.handle.vectors
        return [(e, i, vectors[row]) for e, i, _, row in self.rows]

    def sentence_points(self) -> list[VectorPoint]:
        vectors = self.handle.vectors
        return [sentence_point(e, text, vectors[row]) for e, text, row in self.sentences]

    def sentence_vector(self, episode_ids: Iterable[str], sentence: str) -> list[float] | None:
        """The sentence's vector pooled from a passage of one of these episodes that holds
        it verbatim; None when none does (or the pass cannot give it)."""
        if not sentence.strip():
            return None
        for episode_id in episode_ids:
            for text, row in self._by_episode.get(episode_id, ()):
                at = text.find(sentence)
                if at >= 0:
                    vector = self.handle.span_vector(row, at, at + len(sentence))
                    if vector is not None:
                        return vector
        return None


PassageRow = tuple[Episode, int, str, int]
SentenceRow = tuple[Episode, str, int]


def sentence_rows(episodes: Sequence[Episode], first_row: int) -> list[SentenceRow]:
    """Each episode's candidate sentence texts (``retrieval.evidence_text``), numbered from
    ``first_row`` (they follow the passages in one embedding pass)."""
    rows: list[SentenceRow] = []
    for episode in episodes:
        for text in evidence_texts(episode):
            rows.append((episode, text, first_row + len(rows)))
    return rows


def passage_rows(titles: Mapping[str, str], episodes: Sequence[Episode], tokens: int
                 ) -> list[PassageRow]:
    """A batch's passages: (episode, passage index, text to embed (title, then the passage),
    row)."""
    rows: list[PassageRow] = []
    for episode in episodes:
        for i, text in enumerate(passage_texts(episode.content, tokens)):
            rows.append((episode, i, passage_text(titles[episode.document_id], text), len(rows)))
    return rows


def passage_embedder(embedder: Embedder, spans: bool) -> Callable[[list[str]], PassageVectors]:
    """Passage texts to their vectors, with late chunking's token vectors when ``spans``."""
    if spans:
        return lambda texts: embed_passages(embedder, texts)
    return lambda texts: PlainPassages(embedder.embed(texts))


def entity_vector_changed(before: Entity | None, after: Entity) -> bool:
    """The vector encodes ``entity_text`` (name, kind, first summary sentences)."""
    return (
        before is None or before.type is not after.type or entity_text(before) != entity_text(after)
    )


def entity_payload_changed(before: Entity, after: Entity) -> bool:
    return before.confidence != after.confidence or before.name != after.name


def fact_vector_changed(before: Fact | None, after: Fact) -> bool:
    """The vector encodes the fact sentence."""
    return before is None or before.fact != after.fact


def fact_payload_changed(before: Fact, after: Fact) -> bool:
    return (
        before.type is not after.type
        or before.valid_at != after.valid_at
        or before.invalid_at != after.invalid_at
        or before.source_id != after.source_id
        or before.target_id != after.target_id
    )


@dataclass
class VectorPlan:
    """Per collection: the items to embed and the items to re-write with a stored vector."""

    entities: list[Entity] = field(default_factory=list)
    entity_payloads: list[Entity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    fact_payloads: list[Fact] = field(default_factory=list)


def plan_vectors(
    entities: Iterable[Entity],
    previous_entities: Mapping[str, Entity],
    facts: Iterable[Fact],
    previous_facts: Mapping[str, Fact],
) -> VectorPlan:
    plan = VectorPlan()
    for entity in entities:
        before = previous_entities.get(entity.id)
        if entity_vector_changed(before, entity):
            plan.entities.append(entity)
        elif before is not None and entity_payload_changed(before, entity):
            plan.entity_payloads.append(entity)
    for fact in facts:
        old = previous_facts.get(fact.id)
        if fact_vector_changed(old, fact):
            plan.facts.append(fact)
        elif old is not None and fact_payload_changed(old, fact):
            plan.fact_payloads.append(fact)
    return plan


def stored_vectors(
    vectors: VectorStore, collection: Collection, group_id: str, ids: Sequence[str]
) -> dict[str, list[float]]:
    """Stored vectors by id (both Qdrant backends); empty for a store that cannot read them
    back, so the caller embeds instead."""
    vectors_of: VectorsOf | None = getattr(vectors, "vectors_of", None)
    if vectors_of is None or not ids:
        return {}
    return vectors_of(collection, group_id, list(ids))
