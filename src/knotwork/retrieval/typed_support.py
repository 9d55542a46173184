"""Abstention for a question that names its relation: "Who leads the Routing team?" is not
answered by "Deepak moved to the Routing team" when nothing says who leads it.

A question whose wording names a relation type (leads, reports to, based in …) about a named
entity is supported when a fact of that relation's family touches the entity, or when the
best evidence sentence itself states such a relation (extraction may have typed it loosely).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from knotwork.domain.models import Entity, EntityType, Fact
from knotwork.domain.models import RelationType as R
from knotwork.ingestion.extraction.relations import relation_types_named
from knotwork.retrieval.question import analyze
from knotwork.retrieval.temporal_question import question_time

__all__ = ["FAMILIES", "unsupported_relation", "unsupported_title"]

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


_HOSTED = re.compile(r"\b(?:hosted|deployed|run(?:s|ning)?|served)\b", re.IGNORECASE)
_ASKS_FOR_HOLDER = re.compile(r"^\s*(?:who|whom|where|which)\b", re.IGNORECASE)


def unsupported_relation(question: str, named: Mapping[str, Entity], facts: Iterable[Fact],
                         best_texts: Sequence[str]) -> str | None:
    """Why the evidence does not state the relation the question asks about, or None.

    Only for questions asking who/where/which holds the relation ("When did X approve the
    migration to Y?" names USES in passing). ``named``: the entities the question names
    (id → entity); ``facts``: the candidate facts; ``best_texts``: the best-ranked sentences (each after its title/heading)."""
    hints = analyze(question)
    types = set(hints.types)
    if R.REPORTS_TO in types and any(e.type is EntityType.PERSON for e in named.values()):
        types.discard(R.MEMBER_OF)  # "reports to" of a person is a manager, not a team's group
    checked = [t for t in types if t in FAMILIES]
    if not named or not checked or len(checked) != len(types) or hints.side is None \
            or not _ASKS_FOR_HOLDER.match(question) or question_time(question) is not None:
        return None  # a dated question is answered by dated rows, typed or not
    family = frozenset().union(*(FAMILIES[t] for t in checked))
    if R.LOCATED_IN in checked and _HOSTED.search(question):
        family |= {R.USES, R.DEPENDS_ON}  # "Where is X hosted?": on a cloud, not in a city
    for fact in facts:
        if fact.type not in family:
            continue
        if fact.type in _HOLDERS and set(checked) <= _HOLDERS:
            # "Who leads the X team?": X is what is held; "X owns Policyhub" says nothing
            if fact.target_id in named if hints.side == "target" else fact.source_id in named:
                return None
        elif fact.source_id in named or fact.target_id in named:
            return None
    names = [n.lower() for e in named.values() for n in (e.name, *e.aliases) if len(n) > 2]
    holders_asked = set(checked) <= _HOLDERS and hints.side == "target"
    for text in best_texts:
        lowered = text.lower()
        if any(n in lowered for n in names) and relation_types_named(text) & family:
            if holders_asked and all(_holds(lowered, n) for n in names if n in lowered):
                continue  # "… was owned by the Core team": the team holds, nothing holds it
            return None
    asked = "/".join(sorted(t.value.lower() for t in checked))
    return f"no {asked} fact about {', '.join(sorted(e.name for e in named.values()))}"


_HOLDING_BY = re.compile(r"\b(?:led|run|headed|managed|owned|maintained|overseen)\s+by\s+(?:the\s+)?$")
_HOLDS_AFTER = re.compile(r"^\s+(?:now\s+|also\s+|still\s+)?(?:leads|runs|heads|manages|owns|"
                          r"maintains|oversees)\b")


def _holds(text: str, name: str) -> bool:
    """The name is the holder in the sentence ("… owned by the Core team", "Core team owns
    X"), not what is held."""
    at = text.find(name)
    return bool(_HOLDING_BY.search(text[:at]) or _HOLDS_AFTER.match(text[at + len(name):]))


# executive titles and the words that state them ("CEO" or "chief executive")
_TITLES: Mapping[str, tuple[str, ...]] = {
    "ceo": ("ceo", "chief executive"), "cto": ("cto", "chief technology", "chief technical"),
    "cfo": ("cfo", "chief financial", "chief finance"), "coo": ("coo", "chief operating"),
    "cio": ("cio", "chief information officer"), "ciso": ("ciso", "chief information security"),
    "cpo": ("cpo", "chief product", "chief people"), "cmo": ("cmo", "chief marketing"),
    "president": ("president",), "founder": ("founder", "founded"),
    "chair": ("chair",), "chairman": ("chair",), "chairwoman": ("chair",),
    "chairperson": ("chair",),
}
_ASKS_TITLE = re.compile(
    r"^\s*who\s+(?:is|was|are|were)\s+(?:the\s+|our\s+|their\s+|its\s+)?"
    r"(?:current\s+|new\s+|former\s+|acting\s+|interim\s+)?(?:co-?)?(?P<title>[a-z]+)\b"
    r"|^\s*who\s+(?:is|was)\s+.+?['’]s\s+(?:current\s+|new\s+)?(?P<title2>[a-z]+)\s*\??\s*$",
    re.IGNORECASE)


def unsupported_title(question: str, best_texts: Sequence[str],
                      companies: Sequence[Entity] = (),
                      named_widely: Callable[[Entity], bool] | None = None) -> str | None:
    """"Who is the CEO of X?" is not answered by sentences that never state the title (a
    description of X, X's other people): the title, or its spelled-out form, must be in the
    evidence the answer is made of.

    ``companies``: the organisations the question names. A title stated without naming one of
    them ("reports to the CEO, Ana Ruiz") is the corpus's own company's: it answers only for
    the corpus's company (``named_widely``: named throughout, placed, or with staff), not for
    an investor named in passing."""
    match = _ASKS_TITLE.match(question)
    if match is None:
        return None
    title = (match.group("title") or match.group("title2") or "").lower()
    stated = _TITLES.get(title)
    if stated is None:
        return None
    titled = [t.lower() for t in best_texts
              if any(re.search(r"\b" + re.escape(w), t.lower()) for w in stated)]
    if not titled:
        return f"the evidence never states who is the {title}"
    names = [n.lower() for c in companies for n in (c.name, *c.aliases) if len(n) > 2]
    if not names or any(n in t for t in titled for n in names):
        return None
    if named_widely is not None and any(named_widely(c) for c in companies):
        return None
    return f"no {title} of {', '.join(c.name for c in companies)} is stated"
