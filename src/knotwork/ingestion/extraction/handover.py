"""The old holder of a hand-over sentence as a fact of its own.

"Rhea Voss took over the Ledger team from Mara Quint", "Otto Brisk is the new owner of
Beacon, succeeding Ida Lenz", "Ana now leads Search, replacing Bo": the sentence gives the
new holder's fact (a relation pattern finds it) and names the old holder, whose fact with
the same thing held until then. That fact is added here; ``change.relation_ended`` reads
the old side ("from", "succeeding", "replacing") and ends it at the sentence's date.
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
    return out


__all__ = ["HANDED", "OLD_HOLDER_RULES", "handover_relations"]
