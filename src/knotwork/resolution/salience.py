"""Graph-level salience: entities the tenant's evidence does not carry leave the graph.

The chunk-level filter (``ingestion.extraction.entity_filter``) sees one chunk. Some names it
keeps are still passing phrases once the whole tenant is read: a capitalised word NER typed
as a person in one table cell, a page title, a label that became "known" after its first
guess and then voted for itself. After each ingest (at the end of ``consolidate``) every
entity is scored on what all its evidence says (:func:`features`: documents, mentions, the
extractors that gave them, its relations, its name's shape) by a logistic model; below
:data:`KEEP_THRESHOLD` it is retired: the node, its untyped edges and its vector go, and an
audit row says why. Its mention rows stay in SQL, so a later document that names it again
brings it back (the same stable id) with the earlier mention counted.

Never retired (:func:`protected`): an entity two or more documents mention, one with a typed
relation (retiring it would lose a fact), one with identity evidence (an alias, a merged twin,
a Slack author or user-table vote, an LLM vote), or a ticket-style identifier. So the model
judges only the one-document names without a typed fact; it retires their untyped edges.

The weights are data (:data:`WEIGHTS`), fitted by ``bench/fit_salience.py`` on one
development corpus and reported on the other (see that script's docstring).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from knotwork.domain.models import AuditEvent, Entity, EntityType, Fact
from knotwork.domain.ports.vectors import Collection
from knotwork.ingestion.extraction.types import KnownName

if TYPE_CHECKING:
    from knotwork.runtime import Runtime

log = structlog.get_logger(__name__)

RETIRED = "entity.retired"  # the audit action of a retirement (its detail names the entity)

WordTest = Callable[[str], bool]

# votes that say who or what a name is, not that it looks like a name
IDENTITY_VOTES: frozenset[str] = frozenset({"speaker", "user", "alias", "llm", "acronym"})
# statistical or capitalisation guesses
GUESS_VOTES: frozenset[str] = frozenset({"spacy", "caps", "shape", "gliner"})
# votes that only repeat an earlier decision (the graph's names, pronoun links)
ECHO_VOTES: frozenset[str] = frozenset({"known", "coref"})
_IDENTIFIER = re.compile(r"^[A-Z][A-Z0-9]{1,9}-\d+(?:-\d+)*$")
_LINKERS = frozenset({"of", "and", "the", "for", "in", "on", "&", "de", "van", "von", "da"})

FEATURES: tuple[str, ...] = (
    "mentions_3plus", "no_fact", "guess_only", "rule_vote", "gazetteer_vote",
    "echo_share_half", "single_word", "all_common_words", "all_caps", "has_digit",
    "type_person", "type_org", "type_location", "type_product", "type_other",
)

# fitted by bench/fit_salience.py on the formal-voice development corpus (logistic regression
# over its unprotected entities, labelled by whether a gold entity carries the name). At 0.2
# it retires 46 of that corpus's 53 unprotected non-gold entities and 2 of its 7 gold-named
# ones (twins: each gold entity keeps another graph entity); on the casual-voice corpus (not
# fitted on) 48 of 53 and 3 of 6, again no gold entity left without one. What it keeps are
# short all-capital names (an acronym the tenant may define elsewhere).
WEIGHTS: dict[str, float] = {
    "mentions_3plus": -0.351,
    "no_fact": 0.388,
    "guess_only": -0.663,
    "rule_vote": 0.663,
    "gazetteer_vote": 0.0,
    "echo_share_half": -0.209,
    "single_word": 0.612,
    "all_common_words": -0.476,
    "all_caps": 0.496,
    "has_digit": -0.413,
    "type_person": -0.143,
    "type_org": 0.552,
    "type_location": 0.158,
    "type_product": -0.538,
    "type_other": -0.03,
    "bias": -2.265,
}
KEEP_THRESHOLD = 0.2
# "one document" says nothing in a tenant of a few documents: smaller ones are not judged
MIN_TENANT_DOCUMENTS = 10


@dataclass(slots=True)
class Evidence:
    """What the tenant holds about one entity."""

    documents: int = 0
    mentions: int = 0
    extractors: Counter[str] = field(default_factory=Counter)
    typed_facts: int = 0
    untyped_facts: int = 0


def protected(entity: Entity, ev: Evidence) -> bool:
    """Whether the entity stays whatever it scores."""
    return bool(ev.typed_facts or ev.documents >= 2
                or entity.aliases or entity.merged_from
                or IDENTITY_VOTES & set(ev.extractors)
                or entity.subtype == "IDENTIFIER" or _IDENTIFIER.match(entity.name))


def features(entity: Entity, ev: Evidence, is_word: WordTest) -> list[float]:
    """The feature vector of one entity, in the order of :data:`FEATURES`."""
    words = entity.name.split()
    content = [w.lower().strip(".,'’") for w in words if w.lower() not in _LINKERS]
    own = set(ev.extractors) - ECHO_VOTES
    echo = sum(n for x, n in ev.extractors.items() if x in ECHO_VOTES)
    letters = re.sub(r"[^A-Za-z]", "", entity.name)
    row = {
        "mentions_3plus": ev.mentions >= 3,
        "no_fact": not ev.untyped_facts,
        "guess_only": own <= GUESS_VOTES,
        "rule_vote": "rule" in own,
        "gazetteer_vote": "gazetteer" in own,
        "echo_share_half": ev.mentions > 0 and echo * 2 >= ev.mentions,
        "single_word": len(words) == 1,
        "all_common_words": bool(content) and all(is_word(w) for w in content),
        "all_caps": bool(letters) and letters.isupper(),
        "has_digit": any(c.isdigit() for c in entity.name),
        "type_person": entity.type is EntityType.PERSON,
        "type_org": entity.type is EntityType.ORGANIZATION,
        "type_location": entity.type is EntityType.LOCATION,
        "type_product": entity.type in (EntityType.PRODUCT, EntityType.TECHNOLOGY),
        "type_other": entity.type not in (EntityType.PERSON, EntityType.ORGANIZATION,
                                          EntityType.LOCATION, EntityType.PRODUCT,
                                          EntityType.TECHNOLOGY),
    }
    return [float(row[f]) for f in FEATURES]


def keep_probability(vector: Sequence[float], weights: Mapping[str, float] | None = None) -> float:
    w = weights or WEIGHTS
    z = w["bias"] + sum(w[f] * x for f, x in zip(FEATURES, vector, strict=True))
    return 1.0 / (1.0 + math.exp(-z))


def passing(entities: Sequence[Entity], evidence: Mapping[str, Evidence], is_word: WordTest,
            tenant_documents: int, weights: Mapping[str, float] | None = None,
            threshold: float = KEEP_THRESHOLD) -> list[str]:
    """Ids of the unprotected entities the model scores below the threshold (pure); none in
    a tenant of fewer than :data:`MIN_TENANT_DOCUMENTS` documents."""
    out: list[str] = []
    if tenant_documents < MIN_TENANT_DOCUMENTS:
        return out
    for e in entities:
        ev = evidence.get(e.id, Evidence())
        if protected(e, ev):
            continue
        if keep_probability(features(e, ev, is_word), weights) < threshold:
            out.append(e.id)
    return out


def gather(rt: Runtime, group_id: str, entities: Sequence[Entity],
           facts: Sequence[Fact]) -> dict[str, Evidence]:
    """Each entity's evidence: its SQL mention rows (documents, extractors) and its facts."""
    from knotwork.resolution.service import resolution_sql

    out = {e.id: Evidence() for e in entities}
    sql = resolution_sql(rt)
    if sql is not None:
        for entity_id, (docs, counts) in sql.mention_evidence(group_id, list(out)).items():
            if entity_id in out:
                out[entity_id].documents = docs
                out[entity_id].extractors = Counter(counts)
                out[entity_id].mentions = sum(counts.values())
    for f in facts:
        for end in (f.source_id, f.target_id):
            if end in out:
                if f.type == "RELATED_TO":
                    out[end].untyped_facts += 1
                else:
                    out[end].typed_facts += 1
    return out


def retired_names(rt: Runtime, group_id: str) -> dict[str, KnownName]:
    """The names of the tenant's retired entities (name key -> name), for extraction to keep
    recognising: a retired name is judged on a part of the evidence, so a later document that
    names it votes for it as for a graph entity, and the entity comes back with both
    documents' mentions (then it is protected)."""
    from knotwork.resolution.service import resolution_sql

    sql = resolution_sql(rt)
    out: dict[str, KnownName] = {}
    for detail in sql.audit_details(group_id, RETIRED) if sql is not None else ():
        try:
            row = json.loads(detail)
            known = KnownName(str(row["name"]), EntityType(row["type"]), row.get("subtype"))
        except (ValueError, KeyError, TypeError):
            continue  # an older row without the type
        for key in row.get("keys") or ():
            if isinstance(key, str) and not key.startswith("first:") and len(key) >= 3:
                out[key] = known
    return out


def retire_passing(rt: Runtime, group_id: str, is_word: WordTest) -> int:
    """Retire the tenant's passing entities (see the module docstring); how many went."""
    from knotwork.resolution.service import resolution_sql

    sql = resolution_sql(rt)
    if sql is None:
        return 0  # no mention rows to judge by
    graph = rt.graph
    entities = graph.list_entities(group_id)
    facts = graph.list_facts(group_id)
    evidence = gather(rt, group_id, entities, facts)
    gone = passing(entities, evidence, is_word, len(rt.documents.list_documents(group_id)))
    if not gone:
        return 0
    dropped = set(gone)
    edges = [f.id for f in facts if f.source_id in dropped or f.target_id in dropped]
    if edges:
        graph.delete_facts(group_id, edges)
        rt.vectors.delete(Collection.FACTS, edges)
    graph.delete_entities(group_id, gone)
    rt.vectors.delete(Collection.ENTITIES, gone)
    sql.record_audits([AuditEvent(group_id=group_id, action=RETIRED, entity_id=e.id,
                                  detail=json.dumps({"reason": "salience", "name": e.name,
                                                     "type": e.type.value, "subtype": e.subtype,
                                                     "keys": e.name_keys}, ensure_ascii=False))
                       for e in entities if e.id in dropped])
    log.info("salience.retired", group=group_id, entities=len(gone), facts=len(edges))
    return len(gone)
