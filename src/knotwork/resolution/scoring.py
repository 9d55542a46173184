"""Candidate scoring (design doc 003): name × w_name + embedding cosine × w_embedding +
type match × w_type, with the weights, comparison levels and thresholds as serialisable data.

A component that cannot be computed (no embedding on either side, no type hint) is left out
and the remaining weights are renormalised, so a name-only comparison still spans 0..1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.models import EntityType
from knotwork.resolution.attributes import AttributeModel, combine, compare_all
from knotwork.resolution.blocking import BlockingRule
from knotwork.resolution.exact import entity_keys, lookup_keys
from knotwork.resolution.form_match import (
    abbreviates,
    numbers_differ,
    same_form,
    service_core,
    versioned_abbreviation,
)
from knotwork.resolution.name_forms import has_non_person_word, nickname_formals
from knotwork.resolution.names import (
    generic_similarity,
    given_similarity,
    parse_person,
    person_similarity,
    surname_similarity,
)
from knotwork.resolution.normalize import normalize_name
from knotwork.resolution.person_forms import is_short_form


class ComparisonLevel(BaseModel):
    """A labelled band of a comparison (splink style): similarity >= ``min_similarity``."""

    model_config = ConfigDict(extra="forbid")
    label: str
    min_similarity: float = Field(ge=0.0, le=1.0)


NAME_LEVELS: tuple[ComparisonLevel, ...] = (
    ComparisonLevel(label="exact", min_similarity=1.0),
    ComparisonLevel(label="nickname/initial/handle", min_similarity=0.92),
    ComparisonLevel(label="typo", min_similarity=0.85),
    ComparisonLevel(label="weak", min_similarity=0.6),
    ComparisonLevel(label="different", min_similarity=0.0),
)


class ResolutionConfig(BaseModel):
    """Weights, comparison levels and thresholds; fitted by ``knotwork entities calibrate``."""

    model_config = ConfigDict(extra="forbid")
    weight_name: float = Field(default=0.4, ge=0.0)
    weight_embedding: float = Field(default=0.4, ge=0.0)
    weight_type: float = Field(default=0.2, ge=0.0)
    type_mismatch_score: float = Field(default=0.3, ge=0.0, le=1.0)
    # the embedding component: cosine rescaled from [floor, ceiling] to [0, 1] (MiniLM: the
    # same entity in two contexts ~0.57-0.75, two people in unrelated contexts ~0.3)
    embedding_floor: float = Field(default=0.3, ge=-1.0, lt=1.0)
    embedding_ceiling: float = Field(default=0.7, gt=-1.0, le=1.0)
    # two non-person types (PRODUCT vs TECHNOLOGY): extractors often disagree on these
    related_type_score: float = Field(default=0.75, ge=0.0, le=1.0)
    match_threshold: float = Field(default=0.85, ge=0.0, le=1.0)
    auto_threshold: float = Field(default=0.95, ge=0.0, le=1.0)
    ambiguity_threshold: float = Field(default=0.80, ge=0.0, le=1.0)
    tie_margin: float = Field(default=0.01, ge=0.0, le=0.5)  # equal runners-up: no merge
    type_filter_confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    max_candidates_per_key: int = Field(default=100, ge=1)
    max_candidates: int = Field(default=500, ge=1)
    max_scored: int = Field(default=24, ge=1)  # fully scored after the cheap prefilter
    name_levels: tuple[ComparisonLevel, ...] = NAME_LEVELS
    # exact agreement on one of these properties is decisive (same email = same person) ...
    identifier_properties: tuple[str, ...] = ("email", "employee_id", "slack_id", "soc_sec_id")
    # ... and disagreement on one of these rules a merge out (two emails = two people)
    distinguishing_properties: tuple[str, ...] = ("email", "employee_id", "slack_id")
    # splink-style attribute comparisons (date of birth, address ...): none by default, and
    # an attribute missing on either side is neutral, so names alone score as before
    attributes: AttributeModel = Field(default_factory=AttributeModel)
    # blocking rules added to the default name rules (e.g. family "attribute")
    blocking_rules: tuple[BlockingRule, ...] = ()


@dataclass(slots=True)
class CandidateRecord:
    """What the scorer needs of a stored entity."""

    id: str
    name: str
    type: EntityType
    aliases: tuple[str, ...] = ()
    embedding: np.ndarray | None = None
    properties: dict[str, str] = field(default_factory=dict)  # identifiers (email, ...)
    summary: str = ""
    evidence_count: int = 1
    similarity: float | None = None  # cosine to the current query, when an ANN search gave it
    normalized: tuple[str, ...] = ()  # normalize_name of names, filled once by the index

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass(slots=True)
class MentionQuery:
    text: str
    type: EntityType | None = None
    type_confidence: float = 0.5
    aliases: tuple[str, ...] = ()
    embedding: np.ndarray | None = None
    context: str = ""
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.text, *self.aliases)


@dataclass(slots=True)
class ScoredCandidate:
    entity_id: str
    name: str
    type: EntityType
    score: float
    name_score: float
    embedding_score: float | None
    type_score: float | None
    name_level: str = ""
    matched_name: str = ""
    extra: dict[str, float] = field(default_factory=dict)
    exact: bool = False  # the mention is one of the candidate's names, up to spacing/punctuation


def type_score(config: ResolutionConfig, wanted: EntityType | None, got: EntityType) -> float | None:
    if wanted is None:
        return None
    if wanted is got:
        return 1.0
    if EntityType.PERSON in (wanted, got):
        return config.type_mismatch_score
    return config.related_type_score


def _variants(key: str, etype: EntityType) -> set[str]:
    keys = {*lookup_keys(key, etype), *entity_keys(key, [], etype)}
    return {k for k in keys if not k.startswith("first:")}


# a short form of exactly one candidate's name (two candidates at this level tie: no merge)
SHORT_FORM_SIMILARITY = 0.92


def name_similarity(a: str, b: str, person: bool, etype: EntityType | None = None) -> float:
    if same_form(a, b):  # "Biz Ops"/"BizOps", "SOC2"/"SOC 2", "Krüger"/"Krueger"
        return 1.0
    if person and not (has_non_person_word(a) or has_non_person_word(b)):
        # ("Falcon Migration" typed a person is no person: its first word no given name)
        sim = person_similarity(parse_person(a), parse_person(b))
        # the mention (a) a short form of the candidate's full name (b), never the reverse:
        # a candidate's lone alias "Alex" must not pull in every full name starting so
        if sim < SHORT_FORM_SIMILARITY and is_short_form(a, b):
            return SHORT_FORM_SIMILARITY  # "Piet R", "W. Stroud", "Ros" of a full name
        return sim
    if abbreviates(a, b) or abbreviates(b, a) or versioned_abbreviation(a, b):
        # "P&L", "GeoData" of "Geographic Data", "PG16" of "PostgreSQL 16"
        return SHORT_FORM_SIMILARITY
    core = service_core(a)  # "billing-svc" of "Billing": the mention side only
    if core and same_form(core, b):
        return SHORT_FORM_SIMILARITY
    ka, kb = normalize_name(a), normalize_name(b)
    if etype is None or etype is EntityType.PERSON:
        return generic_similarity(ka, kb)
    # known variants: 'apache kafka' ~ 'kafka', 'northwind robotics inc' ~ 'northwind robotics'
    if _variants(ka, etype) & _variants(kb, etype):
        return 1.0
    return generic_similarity(ka, kb)


def _conflicting_names(query: Sequence[str], candidate: Sequence[str]) -> bool:
    full_q = [q for q in query if len(q.split()) > 1]
    full_c = [c for c in candidate if len(c.split()) > 1]
    return any(identity_conflict(q, c) and _same_surname(q, c) for q in full_q for c in full_c)


def _same_surname(a: str, b: str) -> bool:
    sa, sb = parse_person(a).tokens, parse_person(b).tokens
    return bool(sa and sb) and sa[-1] == sb[-1]


def identity_conflict(a: str, b: str) -> bool:
    """The given names differ in an identity-bearing way (Sam/Samir, Dan/Dani); a given name
    written with or without its hyphen or space ("Min-ji"/"Minji") is the same name."""
    pa, pb = parse_person(a), parse_person(b)
    if not pa.tokens or not pb.tokens:
        return False
    if len(pa.tokens) >= 2 and len(pb.tokens) >= 2 and \
            "".join(pa.tokens[:-1]) == "".join(pb.tokens[:-1]):
        return False
    if pb.given in nickname_formals(pa.given) or pa.given in nickname_formals(pb.given):
        return False  # a nickname table's short form ("Bill" of William) is no other person
    return given_similarity(pa.given, pb.given) is None


def surname_disagrees(query: Sequence[str], candidate: Sequence[str]) -> bool:
    """The mention is a full person name and the candidate has full names, none of them with
    the mention's surname (up to a typo) nor its tokens in another order: a shared given name
    or a lone alias ("Alex") does not make two families one person."""
    full_q = [parse_person(q).tokens for q in query]
    full_q = [t for t in full_q if len(t) >= 2 and len(t[-1]) >= 2]
    full_c = [parse_person(c).tokens for c in candidate]
    full_c = [t for t in full_c if len(t) >= 2 and len(t[-1]) >= 2]
    if not full_q or not full_c:
        return False
    return not any(surname_similarity(q[-1], c[-1]) >= 0.9 or q[-1] in c or c[-1] in q
                   for q in full_q for c in full_c)


# the kind word a team's or system's name ends with: "Routing Team", "Tax Service"
_KIND_HEADS = frozenset({"team", "squad", "group", "guild", "tribe", "chapter", "department",
                         "division", "unit", "org", "service", "system", "gateway", "api",
                         "platform", "pipeline", "app", "project", "program", "office"})


def qualifier_conflict(a: str, b: str) -> bool:
    """Two names of one kind whose qualifiers differ: "Routing Team" / "Routing Platform
    Team", "Ads Team" / "Ads Core Team" are two teams, whatever the embedding says. Same
    head word, and one side has a content word the other lacks (a typo is not a word)."""
    ta, tb = normalize_name(a).split(), normalize_name(b).split()
    if len(ta) < 2 or len(tb) < 2 or ta[-1] != tb[-1] or ta[-1] not in _KIND_HEADS:
        return False
    qa, qb = ta[:-1], tb[:-1]

    def missing(xs: list[str], ys: list[str]) -> bool:
        return any(not any(x.rstrip("s") == y.rstrip("s") or (len(x) > 4 and generic_similarity(x, y) >= 0.9)
                           for y in ys)
                   for x in xs)

    return missing(qa, qb) or missing(qb, qa)


def embedding_score(config: ResolutionConfig, cosine: float) -> float:
    span = config.embedding_ceiling - config.embedding_floor
    if span <= 0:
        return 1.0 if cosine >= config.embedding_ceiling else 0.0
    return min(1.0, max(0.0, (cosine - config.embedding_floor) / span))


def level_of(config: ResolutionConfig, similarity: float) -> str:
    for level in config.name_levels:
        if similarity >= level.min_similarity - 1e-9:
            return level.label
    return config.name_levels[-1].label if config.name_levels else ""


def score_candidate(config: ResolutionConfig, query: MentionQuery,
                    candidate: CandidateRecord) -> ScoredCandidate:
    person = EntityType.PERSON in (query.type, candidate.type) if query.type else \
        candidate.type is EntityType.PERSON
    best, matched = 0.0, candidate.name
    for q in query.names:
        for c in candidate.names:
            sim = name_similarity(q, c, person, query.type or candidate.type)
            if sim > best:
                best, matched = sim, c
                if sim >= 1.0:
                    break
        if best >= 1.0:
            break
    emb: float | None = None
    if query.embedding is not None and candidate.similarity is not None:
        emb = embedding_score(config, candidate.similarity)
    elif query.embedding is not None and candidate.embedding is not None:
        emb = embedding_score(config, float(np.dot(query.embedding, candidate.embedding)))
    typ = type_score(config, query.type, candidate.type)
    parts = [(config.weight_name, best)]
    if emb is not None:
        parts.append((config.weight_embedding, emb))
    if typ is not None:
        parts.append((config.weight_type, typ))
    total_w = sum(w for w, _ in parts) or 1.0
    score = sum(w * s for w, s in parts) / total_w
    level = level_of(config, best)
    own = candidate.normalized or tuple(normalize_name(c) for c in candidate.names)
    exact = any(normalize_name(q) in own or any(
        same_form(q, c) for c in candidate.names)
        for q in query.names) if best >= 1.0 else False
    if person and not exact and surname_disagrees(query.names, candidate.names):
        score, level = min(score, config.ambiguity_threshold - 0.01), "different surname"
    elif person and not exact and _conflicting_names(query.names, candidate.names):
        # one of the candidate's full names is a different person's name to this mention
        # (Alexander vs an alias Alexandra): never a merge on a nickname bridge
        score, level = min(score, config.ambiguity_threshold - 0.01), "conflicting name"
    elif not person and not exact and any(numbers_differ(q, c) for q in query.names
                                          for c in candidate.names) and not any(
            not numbers_differ(q, c) and name_similarity(q, c, False, query.type or candidate.type) >= 0.85
            for q in query.names for c in candidate.names):
        # "INC-2041" vs "INC-2042": one digit apart is another identifier, never a typo
        score, level = min(score, config.ambiguity_threshold - 0.01), "different number"
    elif not person and any(qualifier_conflict(q, c) for q in query.names for c in candidate.names) \
            and not any(name_similarity(q, c, False, query.type or candidate.type) >= 1.0
                        for q in query.names for c in candidate.names):
        # "Routing Team" vs "Routing Platform Team": a sibling team, never merged on looks
        score, level = min(score, config.ambiguity_threshold - 0.01), "different qualifier"
    extra: dict[str, float] = {}
    if config.attributes.comparisons and query.properties and candidate.properties:
        results = compare_all(config.attributes, query.properties, candidate.properties, best)
        extra = {f"{r.attribute}:{r.label}": r.weight for r in results}
        before, score = score, combine(config.attributes, score, results)
        if score != before:
            level = f"{level} + attributes"
    verdict = identifier_verdict(config, query.properties, candidate.properties)
    if verdict is True and typ != config.type_mismatch_score:
        score, level = max(score, config.auto_threshold), "identifier"
    elif verdict is False:
        score, level = min(score, config.ambiguity_threshold - 0.01), "different identifier"
    return ScoredCandidate(candidate.id, candidate.name, candidate.type, round(score, 4),
                           round(best, 4), None if emb is None else round(emb, 4), typ,
                           level, matched, extra, exact)


def identifier_verdict(config: ResolutionConfig, a: dict[str, str], b: dict[str, str]
                       ) -> bool | None:
    """True: a shared identifier value; False: a distinguishing property differs; else None."""
    if not a or not b:
        return None
    def norm(v: str) -> str:
        return v.strip().lower()
    for prop in config.identifier_properties:
        if a.get(prop) and b.get(prop) and norm(a[prop]) == norm(b[prop]):
            return True
    for prop in config.distinguishing_properties:
        if a.get(prop) and b.get(prop) and norm(a[prop]) != norm(b[prop]):
            return False
    return None


def rank(config: ResolutionConfig, query: MentionQuery,
         candidates: Sequence[CandidateRecord]) -> list[ScoredCandidate]:
    scored = [score_candidate(config, query, c) for c in candidates]
    return sorted(scored, key=lambda s: (-s.score, s.entity_id))
