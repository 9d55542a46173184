"""The embedding component at ingestion: mention-in-context vs stored entity vectors."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from knotwork.domain.models import Entity, EntityType, Episode
from knotwork.ingestion.extraction.types import ChunkExtraction, LocalEntity, Mention
from knotwork.ingestion.graph_builder import BatchBuilder
from knotwork.resolution.ingest import EmbeddingSource, mention_text
from knotwork.resolution.normalize import normalize_name
from tests.unit.test_resolution import RecordingIndex

P = EntityType.PERSON
NOW = datetime(2026, 2, 1, tzinfo=UTC)
TOPICS = ("payment", "violin", "hiking")


def _vector(text: str) -> np.ndarray:
    """A topic vector: which of TOPICS the text mentions (a stand-in for a sentence model)."""
    vec = np.array([1.0 if t in text.lower() else 0.0 for t in TOPICS] + [0.05])
    return vec / np.linalg.norm(vec)


class EmbeddingIndex(RecordingIndex):
    def __init__(self, stored: list[Entity]) -> None:
        super().__init__(stored)
        self.embed_calls: list[list[str]] = []
        self.vector_calls = 0

    def entity_vectors(self, entity_ids: Sequence[str]) -> dict[str, np.ndarray]:
        self.vector_calls += 1
        return {e.id: _vector(e.summary) for e in self.stored if e.id in entity_ids}

    def embed_texts(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.embed_calls.append(list(texts))
        return [_vector(t) for t in texts]


def _entity(name: str, summary: str) -> Entity:
    return Entity(id=name.lower().replace(" ", "-"), group_id="g", name=name,
                  canonical_name=normalize_name(name), type=P, name_keys=[normalize_name(name)],
                  summary=summary, created_at=NOW, updated_at=NOW)


def _local(name: str, content: str) -> LocalEntity:
    start = content.index(name)
    return LocalEntity(name, normalize_name(name), P, None, 0.85,
                       [Mention(start, start + len(name), name, P, 0.85, "spacy")])


def _episode(eid: str, content: str) -> Episode:
    return Episode(id=eid, group_id="g", name=eid, content=content, document_id="d",
                   valid_at=NOW, created_at=NOW)


STORED = [_entity("Robert Smith", "Robert Smith runs the payments team."),
          _entity("Robert Smyth", "Robert Smyth plays the violin.")]
TEXT = "Bob Smith approved the payments budget. The weather was fine."


def test_mention_text_is_name_kind_and_its_sentences() -> None:
    ent = _local("Bob Smith", TEXT)
    assert mention_text(ent, TEXT) == "Bob Smith (person). Bob Smith approved the payments budget."


def test_context_embedding_separates_a_close_runner_up() -> None:
    plain = RecordingIndex(list(STORED))
    assert not isinstance(plain, EmbeddingSource)
    BatchBuilder("g", NOW, lambda keys: [], lambda ids: [], index=plain).build(
        [(_episode("ep1", TEXT), ChunkExtraction([_local("Bob Smith", TEXT)], []))])
    [names_only] = plain.recorded
    assert [r.decision for r in names_only.reviews] == ["merge_flagged"]  # a coin toss

    index = EmbeddingIndex(list(STORED))
    assert isinstance(index, EmbeddingSource)
    result = BatchBuilder("g", NOW, lambda keys: [], lambda ids: [], index=index).build(
        [(_episode("ep1", TEXT), ChunkExtraction([_local("Bob Smith", TEXT)], []))])
    assert "Bob Smith" in result.entities["robert-smith"].aliases
    [resolution] = index.recorded
    assert resolution.reviews == []  # the context told them apart
    assert [a.action for a in resolution.audits] == ["resolution.auto_merge"]
    assert index.embed_calls == [["Bob Smith (person). Bob Smith approved the payments budget."]]
    assert index.vector_calls == 1


def test_contradicting_context_keeps_a_nickname_apart() -> None:
    text = "Bob Smith went hiking in the Alps."
    index = EmbeddingIndex([STORED[0]])
    result = BatchBuilder("g", NOW, lambda keys: [], lambda ids: [], index=index).build(
        [(_episode("ep1", text), ChunkExtraction([_local("Bob Smith", text)], []))])
    assert [e.name for e in result.entities.values()] == ["Bob Smith"]  # a new entity
    plain = RecordingIndex([STORED[0]])
    merged = BatchBuilder("g", NOW, lambda keys: [], lambda ids: [], index=plain).build(
        [(_episode("ep1", text), ChunkExtraction([_local("Bob Smith", text)], []))])
    assert "robert-smith" in merged.entities  # the name alone merges


def test_one_embedding_call_per_batch_and_only_where_it_can_matter() -> None:
    bare = _entity("Dana Whitfield", "")  # no summary: its vector is the name only
    index = EmbeddingIndex([*STORED, bare])
    texts = ["Bob Smith approved the payments budget.", "Robert Smith signed it.",
             "Dana Whitfield met Bob Smyth about the violin."]
    items = [(_episode("ep1", texts[0]), ChunkExtraction([_local("Bob Smith", texts[0])], [])),
             (_episode("ep2", texts[1]), ChunkExtraction([_local("Robert Smith", texts[1])], [])),
             (_episode("ep3", texts[2]), ChunkExtraction([_local("Dana Whitfield", texts[2]),
                                                          _local("Bob Smyth", texts[2])], []))]
    exact = [STORED[0]]  # found by exact name, as the graph lookup would
    BatchBuilder("g", NOW, lambda keys: [e for e in exact if set(keys) & set(e.name_keys)],
                 lambda ids: [], index=index).build(items)
    [call] = index.embed_calls  # one call for the whole batch
    assert [t.split(" (")[0] for t in call] == ["Bob Smith", "Bob Smyth"]
    # not embedded: "Robert Smith" (an exact-name candidate decides) and "Dana Whitfield"
    # (its only candidate has no summary, so no vector worth comparing)
    [resolution] = index.recorded
    assert resolution.embedded_mentions == 2
