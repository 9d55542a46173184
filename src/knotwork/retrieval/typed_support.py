"""Abstention for a question that names its relation: "Who leads the Routing team?" is not
answered by "Deepak moved to the Routing team" when nothing says who leads it.

A question whose wording names a relation type (leads, reports to, based in …) about a named
entity is supported when a fact of that relation's family touches the entity, or when the
best evidence sentence itself states such a relation (extraction may have typed it loosely).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from knotwork.domain.models import Entity, Fact
from knotwork.domain.models import RelationType as R
from knotwork.ingestion.extraction.relations import relation_types_named
from knotwork.retrieval.question import analyze
from knotwork.retrieval.temporal_question import question_time

__all__ = ["FAMILIES", "unsupported_relation"]

_HOLDERS = frozenset({R.LEADS, R.MANAGES, R.OWNS, R.MAINTAINS})
# relations that answer a question about each type (generous: abstaining wrongly costs more)
FAMILIES: Mapping[R, frozenset[R]] = {
    R.LEADS: _HOLDERS | {R.CREATED},
    R.MANAGES: _HOLDERS | {R.REPORTS_TO},
    R.OWNS: _HOLDERS | {R.DEVELOPED, R.CREATED},
    R.MAINTAINS: _HOLDERS | {R.DEVELOPED},
    R.REPORTS_TO: frozenset({R.REPORTS_TO, R.MANAGES}),
    R.LOCATED_IN: frozenset({R.LOCATED_IN, R.HEADQUARTERED_IN}),
    R.HEADQUARTERED_IN: frozenset({R.LOCATED_IN, R.HEADQUARTERED_IN}),
    R.MEMBER_OF: frozenset({R.MEMBER_OF, R.WORKS_AT, R.LEADS, R.MANAGES}),
    R.WORKS_AT: frozenset({R.WORKS_AT, R.MEMBER_OF}),
}  # not USES / DEPENDS_ON: stacks and vendors are stated too loosely ("Vendor: Lumenwatch")


_ASKS_FOR_HOLDER = re.compile(r"^\s*(?:who|whom|where|which)\b", re.IGNORECASE)


def unsupported_relation(question: str, named: Mapping[str, Entity], facts: Iterable[Fact],
                         best_texts: Sequence[str]) -> str | None:
    """Why the evidence does not state the relation the question asks about, or None.

    Only for questions asking who/where/which holds the relation ("When did X approve the
    migration to Y?" names USES in passing). ``named``: the entities the question names
    (id → entity); ``facts``: the candidate facts; ``best_texts``: the best-ranked sentences."""
    hints = analyze(question)
    checked = [t for t in hints.types if t in FAMILIES]
    if not named or not checked or len(checked) != len(hints.types) or hints.side is None \
            or not _ASKS_FOR_HOLDER.match(question) or question_time(question) is not None:
        return None  # a dated question is answered by dated rows, typed or not
    family = frozenset().union(*(FAMILIES[t] for t in checked))
    for fact in facts:
        if fact.type in family and (fact.source_id in named or fact.target_id in named):
            return None
    names = [n.lower() for e in named.values() for n in (e.name, *e.aliases) if len(n) > 2]
    for text in best_texts:
        lowered = text.lower()
        if any(n in lowered for n in names) and relation_types_named(text) & family:
            return None
    asked = "/".join(sorted(t.value.lower() for t in checked))
    return f"no {asked} fact about {', '.join(sorted(e.name for e in named.values()))}"
