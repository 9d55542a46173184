"""The old holder of a hand-over sentence as a fact of its own.

"Rhea Voss took over the Ledger team from Mara Quint", "Otto Brisk is the new owner of
Beacon, succeeding Ida Lenz", "Ana now leads Search, replacing Bo": the sentence gives the
new holder's fact (a relation pattern finds it) and names the old holder, whose fact with
the same thing held until then. That fact is added here; ``change.relation_ended`` reads
the old side ("from", "succeeding", "replacing") and ends it at the sentence's date.

The same holds on the other side of a relation with one holder per source: "Bo now reports
to Ida Lenz instead of Cy Lee", "the Almanac team sits in Forestry rather than Marine": the
old value of the same kind, named right after the new one, held until then
(:data:`OLD_VALUE_RULES`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.types import LocalEntity, LocalRelation

R = RelationType
# the relations one holder hands to the next
HANDED = frozenset({R.LEADS, R.MANAGES, R.OWNS, R.MAINTAINS})
# words right before the old holder's mention (name, what it matches: measured on the
# development corpora, sentences where the mention is the old holder / sentences found)
OLD_HOLDER_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("over_from", re.compile(r"\b(?:took|takes|take|taking|taken)\s+over\b.{0,60}\bfrom\s*$",
                             re.IGNORECASE)),
    ("succeeding", re.compile(r"\b(?:succeed(?:s|ed|ing)?|replac(?:es|ed|ing)|instead\s+of|"
                              r"taking\s+over\s+from|handed\s+over\s+by)\s*$", re.IGNORECASE)),
)


# relations with one value per source whose old value a sentence may name beside the new one
SOURCE_HELD = frozenset({R.REPORTS_TO, R.MEMBER_OF, R.LOCATED_IN, R.WORKS_AT, R.USES, R.DEPENDS_ON})
# the words between the new value's mention and the old value's (name, pattern; measured on
# the two development corpora: instead_of gave 2 ended facts, both true, on one and none on the other)
OLD_VALUE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # (the new value's name may run on past its mention: "Ida <Lenz> Moreau instead of …")
    ("instead_of", re.compile(r"^(?:\s+[A-Z][\w'’.-]*){0,2}\s*,?\s*(?i:instead\s+of|rather\s+than|"
                              r"in\s+place\s+of|replacing)(?:\s+(?i:the|our|its|their))?\s*$")),
)


def _old_rule(before: str) -> str | None:
    return next((name for name, rx in OLD_HOLDER_RULES if rx.search(before)), None)


def handover_relations(text: str, entities: Sequence[LocalEntity],
                       relations: Sequence[LocalRelation]) -> list[LocalRelation]:
    """The old holders' facts the hand-over sentences of ``relations`` state."""
    have = {(r.source, r.target, r.type) for r in relations}
    out: list[LocalRelation] = []
    for rel in relations:
        if rel.type not in HANDED or entities[rel.source].type is not EntityType.PERSON:
            continue
        for i, ent in enumerate(entities):
            if i in (rel.source, rel.target) or ent.type is not EntityType.PERSON \
                    or (i, rel.target, rel.type) in have:
                continue
            for m in ent.mentions:
                if not (rel.start <= m.start and m.end <= rel.end):
                    continue
                if _old_rule(text[rel.start:m.start]) is not None:
                    have.add((i, rel.target, rel.type))
                    out.append(LocalRelation(i, rel.target, rel.type, rel.fact, rel.confidence * 0.9,
                                             rel.start, rel.end, method=rel.method))
                    break
    return out + _old_values(text, entities, relations, have)


def _old_values(text: str, entities: Sequence[LocalEntity], relations: Sequence[LocalRelation],
                have: set[tuple[int, int, RelationType]]) -> list[LocalRelation]:
    """The source's old values the sentences of ``relations`` name beside the new one."""
    out: list[LocalRelation] = []
    for rel in relations:
        if rel.type not in SOURCE_HELD:
            continue
        kind = entities[rel.target].type
        news = [m for m in entities[rel.target].mentions if rel.start <= m.start and m.end <= rel.end]
        for i, ent in enumerate(entities):
            if i in (rel.source, rel.target) or ent.type is not kind or (rel.source, i, rel.type) in have:
                continue
            if any(n.end <= m.start and rx.match(text[n.end:m.start])
                   for m in ent.mentions if rel.start <= m.start and m.end <= rel.end
                   for n in news for _, rx in OLD_VALUE_RULES):
                have.add((rel.source, i, rel.type))
                out.append(LocalRelation(rel.source, i, rel.type, rel.fact, rel.confidence * 0.9,
                                         rel.start, rel.end, method=rel.method))
    return out


__all__ = ["HANDED", "OLD_HOLDER_RULES", "OLD_VALUE_RULES", "SOURCE_HELD", "handover_relations"]
