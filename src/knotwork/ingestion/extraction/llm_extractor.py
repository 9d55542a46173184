"""LLM extraction: entities and relations of several chunks per call (at most one call per
chunk), grounded in the chunk text, mapped onto the taxonomy.

Never breaks ingestion: a failed or invalid call logs and yields empty results for its chunks.
Results are typed per chunk (:class:`LLMChunkResult`); :meth:`LLMChunkResult.votes` gives the
ensemble's :class:`LlmChunkVotes`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import structlog

from knotwork.domain.models import EntityType, RelationType
from knotwork.domain.ports import LLMClient, LLMError
from knotwork.domain.timeutil import ensure_utc
from knotwork.ingestion.extraction.llm_taxonomy import map_entity_type, map_relation
from knotwork.ingestion.extraction.types import (
    ChunkExtraction,
    KnownName,
    LlmChunkVotes,
    LlmEntityVote,
    LlmRelationVote,
)
from knotwork.prompts import extract_graph
from knotwork.prompts.base import estimate_tokens
from knotwork.resolution.normalize import clean_display_name, normalize_name

if TYPE_CHECKING:
    from knotwork.ingestion.extraction.extractor import EnsembleExtractor

log = structlog.get_logger(__name__)

# A grounded entity with one of the taxonomy's own types clears the ensemble's lone-vote bar
# (0.9, then discounted); one whose type was mapped from another label needs a second vote.
ENTITY_CONFIDENCE = 0.92
SYNONYM_DISCOUNT = 0.92
RELATION_CONFIDENCE = 0.8
FALLBACK_CONFIDENCE = 0.5  # unknown relation label -> RELATED_TO
_EMPTY_DATES = {"", "null", "none", "n/a", "na", "unknown", "-"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class LLMEntity:
    text: str  # as written in the chunk
    type: EntityType
    confidence: float
    spans: tuple[tuple[int, int], ...]  # every occurrence in the chunk (character offsets)


@dataclass(frozen=True, slots=True)
class LLMRelation:
    source: str  # entity texts of the same chunk
    type: RelationType
    target: str
    sentence: str  # the chunk's sentence stating it
    start: int  # sentence offsets in the chunk
    end: int
    confidence: float
    valid_from: str | None = None  # as the text gives it ("March 2024")
    valid_until: str | None = None
    valid_at: datetime | None = None  # resolved against the reference time, when possible
    invalid_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class LLMChunkResult:
    entities: tuple[LLMEntity, ...] = ()
    relations: tuple[LLMRelation, ...] = ()
    ok: bool = True  # False: the call for this chunk failed or its output was dropped

    def votes(self) -> LlmChunkVotes:
        """The ensemble's view of this chunk."""
        return LlmChunkVotes(
            entities=tuple(LlmEntityVote(e.text, e.type, e.confidence) for e in self.entities),
            relations=tuple(LlmRelationVote(r.source, r.target, r.type, r.confidence, r.sentence)
                            for r in self.relations))


@dataclass(slots=True)
class LLMExtractionStats:
    chunks: int = 0
    calls: int = 0
    failed_calls: int = 0  # LLMError (after the client's retries) or output dropped
    entities: int = 0
    relations: int = 0
    dropped_entities: int = 0  # not in the chunk text, or an unknown type
    dropped_relations: int = 0  # endpoints not among the chunk's entities, no sentence

    @property
    def calls_per_chunk(self) -> float:
        return self.calls / self.chunks if self.chunks else 0.0


@dataclass(slots=True)
class _Batch:
    indexes: list[int] = field(default_factory=list)
    tokens: int = 0


class LLMExtractor:
    name = "llm"

    def __init__(self, client: LLMClient, *, batch_size: int = 4, input_tokens: int = 3000,
                 max_tokens: int | None = None) -> None:
        self._client = client
        self._batch_size = max(1, min(batch_size, extract_graph.MAX_CHUNKS))
        self._input_tokens = input_tokens
        self._max_tokens = max_tokens
        self.stats = LLMExtractionStats()

    def batches(self, texts: Sequence[str]) -> list[list[int]]:
        """Consecutive chunks, at most ``batch_size`` per call and within the token budget
        (a chunk larger than the budget goes alone)."""
        out: list[_Batch] = [_Batch()]
        for i, text in enumerate(texts):
            tokens = estimate_tokens(text)
            current = out[-1]
            if current.indexes and (len(current.indexes) >= self._batch_size
                                    or current.tokens + tokens > self._input_tokens):
                current = _Batch()
                out.append(current)
            current.indexes.append(i)
            current.tokens += tokens
        return [b.indexes for b in out if b.indexes]

    def extract(self, texts: Sequence[str],
                reference_times: Sequence[datetime | None] | None = None) -> list[LLMChunkResult]:
        refs = list(reference_times) if reference_times is not None else [None] * len(texts)
        results: list[LLMChunkResult] = [LLMChunkResult() for _ in texts]
        for batch in self.batches(texts):
            for i, result in zip(batch, self._call(batch, texts, refs), strict=True):
                results[i] = result
        self.stats.chunks += len(texts)
        return results

    # ------------------------------------------------------------------ one call
    def _call(self, batch: list[int], texts: Sequence[str],
              refs: Sequence[datetime | None]) -> list[LLMChunkResult]:
        prompt = extract_graph.Input(chunks=[
            extract_graph.ChunkText(index=n, text=texts[i],
                                    reference_date=refs[i].date().isoformat() if refs[i] else None)
            for n, i in enumerate(batch, 1)])
        self.stats.calls += 1
        try:
            reply = self._client.complete(
                extract_graph.render(prompt), extract_graph.Output,
                name=f"{extract_graph.NAME}/{extract_graph.VERSION}", max_tokens=self._max_tokens)
        except LLMError as exc:
            self.stats.failed_calls += 1
            log.warning("llm_extract.failed", chunks=len(batch), error=str(exc))
            return [LLMChunkResult(ok=False) for _ in batch]
        if reply.value is None:
            self.stats.failed_calls += 1
            log.warning("llm_extract.dropped", chunks=len(batch), error=reply.error)
            return [LLMChunkResult(ok=False) for _ in batch]
        graphs: dict[int, list[extract_graph.ChunkGraph]] = {}
        for graph in reply.value.chunks:
            number = graph.chunk if len(batch) > 1 else 1  # one chunk: any number is it
            if 1 <= number <= len(batch):
                graphs.setdefault(number, []).append(graph)
            else:
                log.info("llm_extract.unknown_chunk", chunk=graph.chunk, batch=len(batch))
        return [self._ground(texts[i], graphs.get(n, []), refs[i])
                for n, i in enumerate(batch, 1)]

    # ------------------------------------------------------------------ grounding
    def _ground(self, text: str, graphs: list[extract_graph.ChunkGraph],
                reference: datetime | None) -> LLMChunkResult:
        entities: dict[str, LLMEntity] = {}
        for graph in graphs:
            for item in graph.entities:
                entity = _entity(text, item)
                if entity is None:
                    self.stats.dropped_entities += 1
                    continue
                key = normalize_name(entity.text)
                if key and key not in entities:
                    entities[key] = entity
        relations: list[LLMRelation] = []
        seen: set[tuple[str, str, str]] = set()
        for graph in graphs:
            for item in graph.relations:
                relation = _relation(text, item, entities, reference)
                if relation is None:
                    self.stats.dropped_relations += 1
                    continue
                key = (normalize_name(relation.source), relation.type.value,
                       normalize_name(relation.target))
                if key not in seen:
                    seen.add(key)
                    relations.append(relation)
        self.stats.entities += len(entities)
        self.stats.relations += len(relations)
        return LLMChunkResult(tuple(entities.values()), tuple(relations))


def _occurrences(text: str, name: str) -> list[tuple[int, int]]:
    words = [re.escape(w) for w in name.split()]
    if not words:
        return []
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def _entity(text: str, item: extract_graph.ExtractedEntity) -> LLMEntity | None:
    name = clean_display_name(item.name)
    kind, exact = map_entity_type(item.type)
    if kind is None or len(name) < 2:
        return None
    spans = _occurrences(text, name)
    if not spans:  # not in the chunk: invented, or paraphrased beyond recognition
        return None
    start, end = spans[0]
    confidence = ENTITY_CONFIDENCE * (1.0 if exact else SYNONYM_DISCOUNT)
    return LLMEntity(text[start:end], kind, round(confidence, 4), tuple(spans))


def _sentences(text: str) -> list[tuple[int, int]]:
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        if text[start:m.start()].strip():
            out.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        out.append((start, len(text)))
    return out


def _sentence_for(text: str, claimed: str, source: LLMEntity,
                  target: LLMEntity) -> tuple[int, int] | None:
    """The chunk sentence the LLM quoted, else the first one naming both ends."""
    spans = _sentences(text)
    wanted = " ".join(claimed.split()).lower()
    if wanted:
        for start, end in spans:
            sentence = " ".join(text[start:end].split()).lower()
            if wanted in sentence or (len(sentence) > 20 and sentence in wanted):
                return start, end
    for start, end in spans:
        sentence = text[start:end]
        if all(_names_in(sentence, ent) for ent in (source, target)):
            return start, end
    return None


_GENERIC = {"project", "team", "the", "program", "programme", "operation", "initiative", "squad",
            "group", "department", "inc", "ltd", "llc", "corp", "company"}


def _names_in(sentence: str, entity: LLMEntity) -> bool:
    """The sentence names the entity: in full, or by one of its distinctive words
    ("Atlas" for "Project Atlas", "Dana" for "Dana Whitfield")."""
    if _occurrences(sentence, entity.text):
        return True
    words = [w for w in entity.text.split() if len(w) >= 3 and w.lower() not in _GENERIC
             and w[0].isupper()]
    return len(entity.text.split()) > 1 and any(_occurrences(sentence, w) for w in words)


def _date(value: str | None) -> str | None:
    if value is None or value.strip().lower() in _EMPTY_DATES:
        return None
    return value.strip()


def resolve_date(value: str | None, reference: datetime | None) -> datetime | None:
    """A date as text ("March 2024", "2024-03-01") against the reference time; None if
    unparseable or relative beyond what dateutil understands."""
    if value is None or reference is None:
        return None
    from dateutil import parser as dateparser

    default = reference.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0,
                                tzinfo=None)
    cleaned = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", value)
    cleaned = re.sub(r"(?i)\b(early|mid|late|since|from|until|till|by|in)\s+", "", cleaned)
    try:
        return ensure_utc(dateparser.parse(cleaned, default=default))
    except (ValueError, OverflowError):
        return None


def _relation(text: str, item: extract_graph.ExtractedRelation, entities: dict[str, LLMEntity],
              reference: datetime | None) -> LLMRelation | None:
    source = entities.get(normalize_name(item.source))
    target = entities.get(normalize_name(item.target))
    if source is None or target is None or source is target:
        return None
    kind, reverse, known = map_relation(item.relation)
    if reverse:
        source, target = target, source
    where = _sentence_for(text, item.sentence, source, target)
    if where is None:
        return None
    start, end = where
    valid_from, valid_until = _date(item.valid_from), _date(item.valid_until)
    valid_at, invalid_at = resolve_date(valid_from, reference), resolve_date(valid_until, reference)
    if valid_at and invalid_at and invalid_at <= valid_at:
        invalid_at = None
    return LLMRelation(
        source=source.text, type=kind, target=target.text, sentence=text[start:end].strip(),
        start=start, end=end,
        confidence=RELATION_CONFIDENCE if known else FALLBACK_CONFIDENCE,
        valid_from=valid_from, valid_until=valid_until, valid_at=valid_at, invalid_at=invalid_at)


def llm_votes(extractor: LLMExtractor | None, texts: Sequence[str],
              reference_times: Sequence[datetime | None] | None = None
              ) -> list[LlmChunkVotes | None] | None:
    """The ensemble's ``llm=`` argument: the LLM's votes per chunk (None for a chunk whose
    call failed), or None with no LLM configured. At most one call per chunk."""
    if extractor is None:
        return None
    return [r.votes() if r.ok else None for r in extractor.extract(texts, reference_times)]


class LLMVotingExtractor:
    """The ingestion extractor with an LLM configured: every ``extract`` call first runs one
    batched LLM pass over its texts, then the ensemble with those votes (``llm=``). Anything
    else (``names_in``, ``nlp``, ``users``, ...) is the wrapped ensemble's."""

    def __init__(self, ensemble: EnsembleExtractor, llm: LLMExtractor) -> None:
        self._ensemble = ensemble
        self.llm = llm

    def extract(self, texts: Sequence[str], known: Mapping[str, KnownName],
                context: Sequence[KnownName] = (),
                llm: Sequence[LlmChunkVotes | None] | None = None) -> list[ChunkExtraction]:
        votes = llm if llm is not None else llm_votes(self.llm, texts)
        return self._ensemble.extract(texts, known, context, llm=votes)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ensemble, name)
