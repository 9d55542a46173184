"""Ensemble voting over entity extractors (design doc 003, "Entity Extraction Algorithm").

For each unique span (candidates that overlap are one span; the most precise extractor's
offsets win):
- votes = the distinct extractors that found it;
- votes >= 2: confidence = 1 - prod(1 - c_e) over the extractors' best confidences;
- a single extractor: kept only above 0.9, its confidence discounted (x 0.8);
- the type is the confidence- and reliability-weighted majority of the voters.
Then coreference links (given names, pronouns, "the project") are added; they are not votes.
Canonical names (titles, case, whitespace, possessives) come from ``resolution.normalize``
when mentions are grouped into entities; every surface form is kept as an alias.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.coref import coref_mentions, given_name_mentions
from knotwork.ingestion.extraction.extractors import (
    CapsExtractor,
    GazetteerExtractor,
    KnownNameExtractor,
    RuleExtractor,
    ShapeExtractor,
    SpacyNerExtractor,
    SpeakerExtractor,
    UserTableExtractor,
)
from knotwork.ingestion.extraction.given_names import is_given_name
from knotwork.ingestion.extraction.mentions import PRIORITY, first_person_mentions
from knotwork.ingestion.extraction.speakers import speaker_turns
from knotwork.ingestion.extraction.types import ChunkInput, Extractor, KnownName, Mention

# how much each extractor's word counts for the TYPE (not for the vote count)
TYPE_WEIGHT: Mapping[str, float] = {"speaker": 3.0, "user": 3.0, "gazetteer": 3.0, "rule": 2.5,
                                    "known": 2.0, "llm": 2.0, "gliner": 1.5, "spacy": 1.0,
                                    "caps": 0.0, "shape": 0.0}


@dataclass(frozen=True, slots=True)
class VotePolicy:
    min_votes: int = 2
    single_threshold: float = 0.9  # a lone extractor must be more sure than this …
    single_discount: float = 0.8  # … and its confidence is discounted
    max_confidence: float = 0.99


def _overlap(a: Mention, b: Mention) -> bool:
    return a.start < b.end and b.start < a.end


def _jaccard(a: Mention, b: Mention) -> float:
    inter = min(a.end, b.end) - max(a.start, b.start)
    union = max(a.end, b.end) - min(a.start, b.start)
    return max(0.0, inter / union) if union else 0.0


def vote(candidates: Sequence[Mention], policy: VotePolicy = VotePolicy()) -> list[Mention]:
    """Non-overlapping mentions that pass the vote, in text order (``extractor`` = span giver)."""
    ranked = sorted(candidates, key=lambda m: (-PRIORITY.get(m.extractor, 0), -(m.end - m.start), m.start))
    taken: list[Mention] = []
    for anchor in ranked:
        if any(_overlap(anchor, t) for t in taken):
            continue
        supporters = [c for c in candidates if _overlap(c, anchor)]
        best: dict[str, float] = defaultdict(float)
        for c in supporters:
            best[c.extractor] = max(best[c.extractor], c.confidence)
        if len(best) >= policy.min_votes:
            miss = 1.0
            for conf in best.values():
                miss *= 1.0 - conf
            confidence = min(policy.max_confidence, 1.0 - miss)
        elif anchor.confidence > policy.single_threshold:
            confidence = anchor.confidence * policy.single_discount
        else:
            continue
        etype, subtype = _type_vote(anchor, supporters)
        taken.append(replace(anchor, type=etype, subtype=subtype, confidence=round(confidence, 4),
                             votes=tuple(sorted(best))))
    return sorted(taken, key=lambda m: m.start)


def _type_vote(anchor: Mention, supporters: Sequence[Mention]) -> tuple[EntityType, str | None]:
    scores: dict[EntityType, float] = defaultdict(float)
    for c in supporters:
        scores[c.type] += TYPE_WEIGHT.get(c.extractor, 1.0) * c.confidence * _jaccard(c, anchor)
    if not scores or max(scores.values()) <= 0:
        return anchor.type, anchor.subtype
    etype = max(scores, key=lambda t: (scores[t], t == anchor.type))
    if etype is anchor.type:
        subtype = anchor.subtype
    else:
        typed = [c for c in supporters if c.type is etype and c.subtype]
        subtype = max(typed, key=lambda c: TYPE_WEIGHT.get(c.extractor, 1.0)).subtype if typed else None
    # a lone given name the statistical model called a company or product is a person
    if (" " not in anchor.text and is_given_name(anchor.text) and subtype is None
            and etype not in (EntityType.LOCATION, EntityType.PERSON)
            and {c.extractor for c in supporters} <= {"spacy", "shape", "caps"}):
        return EntityType.PERSON, None
    return etype, subtype


def _merge(candidates: list[Mention]) -> list[Mention]:
    """Links and voted mentions together: the higher-priority span wins an overlap."""
    ranked = sorted(candidates, key=lambda m: (-PRIORITY.get(m.extractor, 0), -(m.end - m.start), m.start))
    taken: list[Mention] = []
    for cand in ranked:
        if all(cand.end <= t.start or cand.start >= t.end for t in taken):
            taken.append(cand)
    return sorted(taken, key=lambda m: m.start)


def link(text: str, voted: list[Mention], context: Sequence[KnownName]) -> list[Mention]:
    """Voted mentions plus the coreference links (speakers' I/my, given names, pronouns)."""
    merged = _merge(voted + first_person_mentions(text, speaker_turns(text)))
    merged = _merge(merged + given_name_mentions(text, merged))
    merged += coref_mentions(text, merged, context)
    return _merge(merged)


class Ensemble:
    """Runs every extractor over a batch of chunks, votes per chunk, then links coreference."""

    def __init__(self, extractors: Sequence[Extractor], policy: VotePolicy = VotePolicy()) -> None:
        self.extractors = list(extractors)
        self.policy = policy

    def candidates(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        per_chunk: list[list[Mention]] = [[] for _ in chunks]
        for extractor in self.extractors:
            for i, found in enumerate(extractor.mentions(chunks)):
                per_chunk[i].extend(found)
        return per_chunk

    def mentions(self, chunks: Sequence[ChunkInput]) -> list[list[Mention]]:
        return [link(c.text, vote(cands, self.policy), c.context)
                for c, cands in zip(chunks, self.candidates(chunks), strict=True)]


def default_extractors(nlp: object | None = None) -> list[Extractor]:
    """The no-model extractors plus spaCy (GLiNER and the LLM are added when configured)."""
    return [SpeakerExtractor(), UserTableExtractor(), RuleExtractor(), GazetteerExtractor(),
            KnownNameExtractor(), SpacyNerExtractor(nlp), CapsExtractor(), ShapeExtractor()]


def ensemble_mentions(
    text: str,
    doc: object | None,
    known: Mapping[str, KnownName],
    context: Sequence[KnownName] = (),
    users: Mapping[str, str] | None = None,
    extra: Sequence[Mention] = (),
) -> list[Mention]:
    """One chunk through the default ensemble (``doc``: its spaCy parse, or None)."""
    chunk = ChunkInput(text, doc, known, context, users or {})
    cands = Ensemble(default_extractors()).candidates([chunk])[0] + list(extra)
    return link(text, vote(cands), context)
