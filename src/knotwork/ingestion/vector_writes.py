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
from knotwork.retrieval.evidence_text import evidence_spans, sentence_point

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Collection as Container

VectorsOf = Callable[[Collection, str, list[str]], dict[str, list[float]]]


@dataclass
class EmbeddedPassages:
    """A batch's passages: (episode, passage index, embedded text, row in ``handle``)."""

    rows: list[PassageRow]
    handle: PassageVectors
    # candidate sentences as local search embeds them: their own row in ``handle``, or the
    # span of a passage they are pooled from
    sentences: list[SentenceRow] = field(default_factory=list)
    _by_episode: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for episode, _, text, row in self.rows:
            self._by_episode.setdefault(episode.id, []).append((text, row))

    def of_documents(self, document_ids: Container[str]) -> EmbeddedPassages:
        return EmbeddedPassages(
            [r for r in self.rows if r[0].document_id in document_ids], self.handle,
            [r for r in self.sentences if r.episode.document_id in document_ids],
        )

    def points(self) -> list[tuple[Episode, int, list[float]]]:
        vectors = self.handle.vectors
        return [(e, i, vectors[row]) for e, i, _, row in self.rows]

    def sentence_points(self, embed: Callable[[list[str]], list[list[float]]]
                        ) -> list[VectorPoint]:
        """The candidate sentences' points: from their own row, pooled from their passage's
        span, or (a span the pass cannot give: beyond its truncation) embedded by ``embed``."""
        vectors = self.handle.vectors
        out: list[VectorPoint] = []
        missing: list[SentenceRow] = []
        for s in self.sentences:
            vector = (vectors[s.row] if s.row is not None
                      else self.span_vector((s.episode.id,), s.first, s.last))
            if vector is None:
                missing.append(s)
            else:
                out.append(sentence_point(s.episode, s.text, vector))
        if missing:
            out += [sentence_point(s.episode, s.text, v) for s, v in
                    zip(missing, embed([s.text for s in missing]), strict=True)]
        return out

    def sentence_vector(self, episode_ids: Iterable[str], sentence: str) -> list[float] | None:
        """The sentence's vector pooled from a passage of one of these episodes that holds
        it verbatim; None when none does (or the pass cannot give it)."""
        return self.span_vector(episode_ids, sentence, sentence)

    def span_vector(self, episode_ids: Iterable[str], first: str, last: str
                    ) -> list[float] | None:
        """The vector pooled over a passage's text from the start of ``first`` to the end of
        ``last`` (after it), in a passage of one of these episodes; None when none holds both."""
        if not first.strip() or not last.strip():
            return None
        for episode_id in episode_ids:
            for text, row in self._by_episode.get(episode_id, ()):
                end = _span_end(text, first, last)
                if end is not None:
                    vector = self.handle.span_vector(row, end[0], end[1])
                    if vector is not None:
                        return vector
        return None


def _span_end(text: str, first: str, last: str) -> tuple[int, int] | None:
    """Where ``first`` … ``last`` stand in ``text`` (start, end), or None."""
    at = text.find(first)
    if at < 0:
        return None
    stop = text.find(last, at + len(first) if last != first else at)
    return (at, stop + len(last)) if stop >= 0 else None


PassageRow = tuple[Episode, int, str, int]


@dataclass(frozen=True)
class SentenceRow:
    """A candidate sentence's scored text (``retrieval.evidence_text``) and where its vector
    comes from: its own ``row`` of the embedding pass, or (``row`` None) the passage span
    from ``first`` to ``last`` (late chunking, ``Settings.evidence_pooled``)."""

    episode: Episode
    text: str
    row: int | None
    first: str = ""
    last: str = ""


def sentence_rows(episodes: Sequence[Episode], first_row: int,
                  passages: Sequence[PassageRow] | None = None) -> list[SentenceRow]:
    """Each episode's candidate sentence texts. With ``passages``, one whose span stands in a
    passage of its episode is pooled from it; the others are numbered from ``first_row``
    (they follow the passages in one embedding pass)."""
    texts: dict[str, list[str]] = {}
    for episode, _, text, _ in passages or ():
        texts.setdefault(episode.id, []).append(text)
    rows: list[SentenceRow] = []
    row = first_row
    for episode in episodes:
        for span in evidence_spans(episode):
            if any(_span_end(t, span.first, span.last) for t in texts.get(episode.id, ())):
                rows.append(SentenceRow(episode, span.scored, None, span.first, span.last))
            else:
                rows.append(SentenceRow(episode, span.scored, row))
                row += 1
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
        if fact.derived:
            continue  # graph only: no vector, so vector search never meets it
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
