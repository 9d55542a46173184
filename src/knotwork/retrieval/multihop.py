"""Rule-based multi-hop: "the manager of the person who leads X" → two local searches.

Step 1 answers the embedded clause ("Who leads X?") and takes the entity the best fact
leads to; step 2 asks the outer question about that entity. Each step's answer is
checked against the graph (a fact must connect it), and the trace says what was done.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from knotwork.domain.models import EntityType, QueryMode, QueryResult
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.lexical import stem
from knotwork.retrieval.local import LocalSearch
from knotwork.retrieval.question import analyze
from knotwork.retrieval.role_nouns import ROLE_HEADS

# the described one's head noun: people (answered "Who …") and things ("Which game …")
_PEOPLE = ("person", "people", "one", "engineer", "employee", "manager", "lead", "designer",
           "developer", "scientist", "analyst", "producer", "director", "author")
_THINGS = ("team", "group", "squad", "project", "service", "system", "company", "organization",
           "product", "office", "merchant", "customer", "client", "vendor", "supplier",
           "partner", "studio", "game", "app", "application", "tool", "model", "platform",
           "database", "library", "feature", "initiative", "programme", "program")
_NOUN = r"(?:" + "|".join(_PEOPLE + _THINGS) + r")"
# an order word the clause's answer must keep: "the first merchant that went live on X"
_ORDER = r"(?:first|last|second|third|original|earliest|latest|only|newest|oldest)"
_CLAUSE = re.compile(r"\b(?:the|a|an)\s+(?:(?P<order>" + _ORDER + r")\s+)?(?P<noun>" + _NOUN
                     + r")\s+(?P<pron>who|that|which|whose)\s+", re.IGNORECASE)
_TAIL_VERB = re.compile(
    r"\s+(?P<verb>belong(?:s)? to|report(?:s)? to|(?:work|operate)(?:s)?(?: (?:at|for|in|on|from))?|"
    r"lead|manage|use|own|maintain|sit in|live in|depend on|join(?:ed)?|"
    r"(?:based|located|headquartered)(?: in| at)?|(?:a )?part of|(?:a )?member of|under|on|in|at|"
    r"with|from)\s*\??\s*$", re.IGNORECASE)
_WH_FOR = {noun: f"Which {noun}" for noun in _THINGS}


# words that end the outer question, not the named thing: "Which team is the lead of X on?"
_PARTICLES = (r"(?:on|in|at|to|for|of|from|with|under|based|located|headquartered|part|"
              r"belong|report|work|sit|use|join|joined)")
# a lower-case head noun that ends a name: "the Security team", "the Billing service"
_HEADS = (r"(?:team|division|department|group|squad|guild|unit|org|service|system|project|"
          r"platform|product|office|gateway|api|pipeline)")
# "Who does the leader of the Security Team report to?": a role of a named thing, nested
_ROLE_OF = re.compile(
    r"\b(?:the|a|an)\s+(?P<role>[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}?)\s+(?:of|for)\s+"
    r"(?P<obj>(?:the\s+)?[A-Z0-9][\w'’&.-]*(?:\s+(?:of\s+)?[A-Z0-9][\w'’&.-]*)*"
    r"(?:\s+" + _HEADS + r"\b|\s+(?!" + _PARTICLES + r"\b)[a-z][a-z-]*(?=\s*\??\s*$))?)")
_WH_START = re.compile(r"^\s*(?:who|whom|whose|what|which|where|when|how)\b", re.IGNORECASE)
_NOT_ROLES = frozenset(stem(w) for w in (
    "overview", "summary", "status", "history", "list", "risk", "risks", "theme", "themes", "topic",
    "topics", "cause", "date", "time", "number", "name", "names", "purpose", "goal", "goals", "role",
    "result", "results", "outcome", "main", "key", "details", "timeline", "scope", "cost", "price"))
_SINGLE_HOP = re.compile(r"^\s*(?:who|what|which|where|when)\s+(?:is|was|are|were)\s+\{\}\s*\??\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Decomposition:
    inner: str  # the embedded question, answered first
    template: str  # the outer question with {} where the bridge entity goes
    noun: str | None = None  # what the clause names ("the person who …"): the bridge's kind
    role: str | None = None  # "the <role> of <X>" (no clause): the role's words


# an object clause: "the system that RouteKit depends on", "the team that Ana is on": the
# clause's subject is a name, the noun its object, and the clause ends the question
_OBJECT_CLAUSE = re.compile(
    r"^(?P<subj>(?:the\s+)?[A-Z0-9][\w'’&.-]*(?:\s+(?:[A-Z0-9][\w'’&.-]*|" + _HEADS + r"))*)\s+"
    r"(?P<aux>(?:does|do|did|will|would|can)\s+)?(?P<verb>[a-z]+)"
    r"(?P<prep>(?:\s+(?:on|upon|to|in|into|with|from|for|at|under|of))?)\s*\??\s*$")
_BE = frozenset({"is", "are", "was", "were"})


def _base_verb(verb: str) -> str:
    """'depends' → 'depend', 'relies' → 'rely', 'uses' → 'use' (the form after 'does')."""
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("sses", "shes", "ches", "xes")):
        return verb[:-2]
    if verb.endswith("s") and not verb.endswith("ss"):
        return verb[:-1]
    return verb


def _order_of(m: re.Match[str]) -> str:
    """", the first one" when the clause asks for the first (last, …) of several."""
    return f", the {m.group('order').lower()} one" if m.group("order") else ""


def _object_clause(q: str, m: re.Match[str]) -> Decomposition | None:
    obj = _OBJECT_CLAUSE.match(q[m.end():])
    if obj is None:
        return None
    wh = _WH_FOR.get(m.group("noun").lower(), "What")
    subj, verb, prep = obj.group("subj"), obj.group("verb"), obj.group("prep")
    if verb in _BE:
        inner = f"{wh} {verb} {subj}{prep}{_order_of(m)}?"
    else:
        inner = (f"{wh} does {subj} {verb if obj.group('aux') else _base_verb(verb)}{prep}"
                 f"{_order_of(m)}?")
    return Decomposition(inner, q[: m.start()] + "{}?", m.group("noun").lower())


def decompose(question: str) -> Decomposition | None:
    q = question.strip()
    m = _CLAUSE.search(q)
    if m is None or m.start() == 0:
        return _decompose_role(q)
    whose = m.group("pron").lower() == "whose"
    by_object = None if whose else _object_clause(q, m)
    if by_object is not None:
        return by_object
    rest = q[m.end():]
    tail = _TAIL_VERB.search(rest)
    clause = rest[: tail.start()] if tail else rest.rstrip(" ?")
    if len(clause.split()) < 2:
        return None
    wh = _WH_FOR.get(m.group("noun").lower(), "Who")
    if whose:  # "the vendor whose demo won X" → "Which vendor's demo won X?"
        wh = "Whose" if wh == "Who" else f"{wh}'s"
    inner = f"{wh} {clause.strip()}{_order_of(m)}?"
    outer_tail = f" {tail.group('verb')}?" if tail else "?"
    template = q[: m.start()] + "{}" + outer_tail
    return Decomposition(inner, template, m.group("noun").lower())


def _decompose_role(q: str) -> Decomposition | None:
    """"Who does the <role> of <X> <verb>?" → "Who is the <role> of <X>?" then the outer
    question about the answer; "Who is the <role> of <X>?" alone is one hop."""
    for m in _ROLE_OF.finditer(q):
        if m.start() == 0 or not _WH_START.match(q):
            continue
        if any(stem(w) in _NOT_ROLES for w in m.group("role").lower().split()):
            continue  # "an overview of X", "the main risks of X": not a bridge entity
        if m.group("role").lower().split()[-1] not in ROLE_HEADS:
            continue  # "the design of X", "the two findings of X": a thing, not who holds a role
        template = q[: m.start()] + "{}" + q[m.end():]
        if _SINGLE_HOP.match(template):
            continue
        inner = f"Who is the {m.group('role')} of {m.group('obj').strip()}?"
        return Decomposition(inner, template, role=m.group("role"))
    return None


def multi_hop(search: LocalSearch, question: str, *, as_of: datetime | None,
              max_context_tokens: int) -> QueryResult | None:
    plan = decompose(question)
    if plan is None:
        return None
    first = search.run(plan.inner, as_of=as_of, max_context_tokens=max_context_tokens // 2)
    if first.confidence < search.min_answer_score:
        return None
    named = _named_bridge(search, plan.inner, first)
    kinds = _BRIDGE_KINDS.get(plan.noun or "")
    # of a known kind ("the game whose …"), the entities step 1's evidence names come before
    # those a neighbouring fact leads to; of any kind, a named one may be anything: facts first
    stated = _stated(search, plan.inner, first, kinds) if kinds is not None else []
    bridges = list(dict.fromkeys(stated + _bridges(search, plan.inner, first, kinds))) \
        or ([named] if named else [])
    if not bridges:
        return None
    # "the system that X relies on" may be several: the one the outer question is answered for
    tried: list[tuple[str, str, QueryResult]] = []
    for bridge in bridges[:_MAX_BRIDGES]:
        outer_q = plan.template.format(bridge)
        tried.append((bridge, outer_q, search.run(outer_q, as_of=as_of,
                                                  max_context_tokens=max_context_tokens // 2)))
        if tried[-1][2].confidence >= _SURE:
            break
    # a later bridge (a worse reading of the inner answer) must answer clearly better
    _, (bridge, outer_q, second) = max(
        enumerate(tried), key=lambda it: it[1][2].confidence * (1.0 - _LATER_BRIDGE * it[0]))
    verified = bridge.lower() in first.answer.lower()
    confidence = round(min(first.confidence, second.confidence) * (1.0 if verified else 0.7), 3)
    trace = [
        f"multi-hop step 1: {plan.inner} → {bridge} ({first.answer})",
        f"multi-hop step 2: {outer_q} → {second.answer}",
        "verified: the bridge entity is stated by step 1's evidence" if verified
        else "unverified: the bridge entity came from a neighbouring fact",
    ]
    seen = {c.chunk_id for c in second.citations}
    citations = second.citations + [c for c in first.citations if c.chunk_id not in seen]
    return QueryResult(
        answer=f"{second.answer} ({first.answer})", citations=citations, confidence=confidence,
        mode_used=QueryMode.LOCAL, context=f"{first.context}\n{second.context}",
        reasoning_trace=trace + first.reasoning_trace + second.reasoning_trace,
        entities=first.entities + second.entities, facts=first.facts + second.facts)


_MAX_BRIDGES = 3
_LATER_BRIDGE = 0.1  # each later bridge's outer answer counts this much less
# "the person who …" is a person: people are typed reliably, unlike one-word system names
# (an invented "Conduit" or "Intake" may come out an organisation), so only they are filtered
_BRIDGE_KINDS: dict[str, frozenset[EntityType]] = {
    n: frozenset({EntityType.PERSON}) for n in _PEOPLE if n != "one"}
# a party or a thing is no person ("the vendor whose demo won X" is not its contact)
_BRIDGE_KINDS.update({n: frozenset(set(EntityType) - {EntityType.PERSON}) for n in (
    "merchant", "customer", "client", "vendor", "supplier", "partner", "studio", "game", "app",
    "application", "tool", "model", "platform", "database", "library", "feature")})
_SURE = 0.8  # an outer answer this confident ends the search for a better bridge


def _bridges(search: LocalSearch, inner: str, first: QueryResult,
             kinds: frozenset[EntityType] | None = None) -> list[str]:
    """The entities the best facts lead to, best first: the end the inner question does not
    name, facts of the asked relation with the named end where the question puts it first;
    of the clause's kind when it names one ("the person who …" is no service)."""
    asked = f" {normalize_name(inner)} "
    hints = analyze(inner)
    found: list[tuple[int, int, str]] = []
    for rank, fact in enumerate(first.facts[:10]):
        ends = search.entities([fact.source_id, fact.target_id])
        unnamed = [e for e in ends
                   if not any(f" {k} " in asked for k in e.name_keys if not k.startswith("first:"))]
        if len(ends) == 2 and len(unnamed) == 1:
            # a fact of the asked relation with the named end where the question puts it
            # ("the team of X": X → team) before a neighbour that merely ranked higher
            named_side = "target" if unnamed[0].id == fact.source_id else "source"
            fits = fact.type in hints.types and hints.side in (None, named_side)
            if kinds is None or unnamed[0].type in kinds:
                found.append((0 if fits else 1, rank, unnamed[0].name))
    return list(dict.fromkeys(name for _, _, name in sorted(found)))


def _stated(search: LocalSearch, inner: str, first: QueryResult,
            kinds: frozenset[EntityType] | None) -> list[str]:
    """The entities of the asked kind that step 1's answer names and the question does not,
    in the order the answer names them."""
    asked = f" {normalize_name(inner)} "
    low = first.answer.lower()
    found: list[tuple[int, str]] = []
    for words, entity in search.named_in(first.answer):
        if kinds is not None and entity.type not in kinds:
            continue
        if any(f" {k} " in asked for k in entity.name_keys if not k.startswith("first:")):
            continue
        found.append((low.find(words.lower()), entity.name))
    return [name for _, name in sorted(found)]


def _named_bridge(search: LocalSearch, inner: str, first: QueryResult) -> str | None:
    """No fact links the answer: the first entity the answer names that the question does not."""
    asked = f" {normalize_name(inner)} "
    for _words, entity in search.named_in(first.answer):
        if not any(f" {k} " in asked for k in entity.name_keys if not k.startswith("first:")):
            return entity.name
    return None
