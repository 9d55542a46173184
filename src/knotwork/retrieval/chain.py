"""Answering a chained question hop by hop (the plan: :mod:`knotwork.retrieval.chain_plan`).

Hop 1 is read from a labelled line about the anchor when a page states it ("Owner: <name>"
under the anchor's title, a row whose first cell is the anchor: :mod:`field_hop`), else it
answers the embedded description as its own local question; the bridge is the entity of the
described kind that its evidence names (next to the description's role words when it has
some: "Release manager: <name>"), verified by the role or act stated in that evidence. A
plural anaphor ("their roles") asks hop 2 for each bridge joined by "and". Hop 2 asks the
outer question about the bridge. The answer names both, cites both hops' evidence, and the
trace says which shape fired and where hop 1 was read. When a hop finds nothing (or no
bridge), None: the caller answers in one pass as before.
"""

from __future__ import annotations

import re
from datetime import datetime

from knotwork.domain.models import Citation, Entity, EntityType, QueryMode, QueryResult
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.chain_plan import GROUP_ROLES, HITS, PERSON_ROLES, Plan, plan
from knotwork.retrieval.field_hop import WORDS_LABEL, asked_role, field_bridges
from knotwork.retrieval.intent import AnswerType, intent_of
from knotwork.retrieval.lexical import term_set
from knotwork.retrieval.local import NO_ANSWER, LocalSearch
from knotwork.retrieval.multihop import decompose, multi_hop

__all__ = ["answer_chain", "bridge_of"]

MAX_SEARCHES = 3  # local searches one chained question may cost (a nested first part: 3)
MAX_BRIDGES = 3  # "their roles" of several first-hop answers: the second hop for each
_FIRST_WORDS = 45  # the first hop's evidence shown in the answer, at most
_SECOND_WORDS = 60  # the second hop's
_ASKED_KINDS = {AnswerType.PERSON: frozenset({EntityType.PERSON}),
                AnswerType.ORGANIZATION: frozenset({EntityType.ORGANIZATION}),
                AnswerType.PLACE: frozenset({EntityType.LOCATION})}


def answer_chain(search: LocalSearch, question: str, *, as_of: datetime | None,
                 max_context_tokens: int) -> QueryResult | None:
    found = plan(question)
    if found is None:
        return None
    HITS[found.shape] += 1
    # a relative clause is read from a labelled line first, else decomposed as before
    chained = _chain(search, found, as_of, max_context_tokens,
                     field_only=found.shape == "relative-clause")
    if chained is None and (found.shape == "relative-clause" or decompose(question) is not None):
        # the older clause decomposition, as before
        return multi_hop(search, question, as_of=as_of, max_context_tokens=max_context_tokens)
    return chained


def _chain(search: LocalSearch, found: Plan, as_of: datetime | None,
           max_context_tokens: int, *, field_only: bool = False) -> QueryResult | None:
    """``field_only``: follow the chain only when hop 1 is read from a labelled line."""
    budget = max(200, max_context_tokens // 2)
    searches = [0]
    inner_keys: list[str] = []  # the bridges of a nested first part: not this chain's bridge

    def ask(q: str, nested: bool, after: int) -> QueryResult:
        """``after``: searches still needed once this one is answered."""
        inner = plan(q) if nested and searches[0] + 2 + after <= MAX_SEARCHES else None
        if inner is not None and inner.shape != "conjunction-anaphor":
            HITS[inner.shape] += 1
            searches[0] += 2
            if inner.shape == "relative-clause":
                chained = multi_hop(search, q, as_of=as_of, max_context_tokens=budget)
            else:
                ran = _run(search, inner, q, budget, as_of)
                chained = ran[0] if ran is not None else None
                inner_keys.extend(ran[1].name_keys if ran is not None else ())
            if chained is not None:
                return chained
        searches[0] += 1
        return search.run(q, as_of=as_of, max_context_tokens=budget)

    kinds = found.kinds if found.kinds is not None else _kinds_asked(found.inner)
    read = _field_first(search, found, kinds, as_of)
    if read is not None:
        first, bridges = read
    elif field_only:
        return None
    else:
        first = ask(found.inner, found.joined, 1)
        if _failed(search, first):
            return None
        role = found.role or _asked_noun(found.inner)
        bridge = bridge_of(search, first.answer, found.inner, found.template, kinds, role,
                           skip=frozenset(inner_keys))
        if bridge is None or not _states(first, bridge, found.role or _asked_act(found.inner)):
            return None
        bridges = (bridge, *co_bridges(search, first.answer, bridge, kinds)) \
            if found.plural else (bridge,)
    seconds: list[tuple[Entity, str, QueryResult]] = []
    # several bridges ("their roles"): one second hop each, within the search budget
    for bridge in bridges[:max(1, min(MAX_BRIDGES, MAX_SEARCHES - searches[0]))]:
        outer = found.template.format(bridge.name)
        second = ask(outer, found.joined and not seconds, 0)
        if _failed(search, second):
            if not seconds:
                return None
            continue
        seconds.append((bridge, outer, second))
    return _compose(found, first, seconds)


def _field_first(search: LocalSearch, found: Plan, kinds: frozenset[EntityType] | None,
                 as_of: datetime | None) -> tuple[QueryResult, tuple[Entity, ...]] | None:
    """Hop 1 read from a labelled line about the anchor (:mod:`field_hop`), or None."""
    asked = asked_role(found.inner, found.role) or WORDS_LABEL
    unroled = re.sub(re.escape(found.role), " ", found.inner, flags=re.IGNORECASE) \
        if found.role else found.inner
    anchors = search.anchors(unroled)
    if not anchors:
        return None
    episodes = [ep for ep in search.episodes_mentioning([a.id for a in anchors])
                if as_of is None or ep.valid_at <= as_of]
    hit = field_bridges(found.inner, asked, anchors, episodes, kinds, search.named_in)
    if hit is None:
        return None
    bridges = hit.bridges if found.plural else hit.bridges[:1]
    first = QueryResult(
        answer=f"{hit.title}: {hit.line}", citations=search.cite([(hit.line, [hit.episode_id])], 1),
        confidence=0.8, mode_used=QueryMode.LOCAL, context=hit.line,
        reasoning_trace=[f"chain: hop 1 read from the labelled line '{hit.label}' on '{hit.title}' "
                         + f"(the {asked.noun or 'asked words'} of {', '.join(a.name for a in anchors)})"],
        entities=list(bridges))
    return first, bridges


def co_bridges(search: LocalSearch, answer: str, bridge: Entity,
               kinds: frozenset[EntityType] | None) -> list[Entity]:
    """Entities of the bridge's kind joined to it by "and" in the first hop's evidence
    ("approved by A and B"): a plural anaphor ("their roles") asks about each."""
    named = {e.id: (w, e) for w, e in search.named_in(answer)}
    words = next((w for w, e in named.values() if e.id == bridge.id), None)
    if words is None:
        return []
    out: list[Entity] = []
    for w, e in named.values():
        if e.id == bridge.id or (kinds is not None and e.type not in kinds):
            continue
        pair = rf"{re.escape(words)}\s*(?:,|,?\s+and)\s+{re.escape(w)}|" \
               rf"{re.escape(w)}\s*(?:,|,?\s+and)\s+{re.escape(words)}"
        if re.search(pair, answer, re.IGNORECASE):
            out.append(e)
    return out


def _run(search: LocalSearch, found: Plan, question: str, budget: int,
         as_of: datetime | None) -> tuple[QueryResult, Entity] | None:
    """A nested two-hop chain (the first part of a conjunction), no further nesting."""
    read = _field_first(search, found, found.kinds, as_of)
    bridge: Entity | None
    if read is not None:
        first, bridge = read[0], read[1][0]
    else:
        first = search.run(found.inner, as_of=as_of, max_context_tokens=budget)
        if _failed(search, first):
            return None
        bridge = bridge_of(search, first.answer, found.inner, found.template, found.kinds,
                           found.role)
        if bridge is None or not _states(first, bridge, found.role):
            return None
    outer = found.template.format(bridge.name)
    second = search.run(outer, as_of=as_of, max_context_tokens=budget)
    if _failed(search, second):
        return None
    return _compose(found, first, [(bridge, outer, second)]), bridge


_WHICH_NOUN = re.compile(r"^\W*(?:(?:in|to|at|from|for|with|on|by|under)\s+)?(?:which|what)\s+"
                         r"([a-z][a-z-]+)\b", re.IGNORECASE)


def _asked_noun(question: str) -> str | None:
    """"Which division does X belong to?" → division: the bridge is named next to it."""
    m = _WHICH_NOUN.match(question)
    return m.group(1).lower() if m and m.group(1).lower() in PERSON_ROLES | GROUP_ROLES else None


_WHO_VERB = re.compile(r"^\W*who\s+(?!(?:is|was|are|were|does|do|did|has|have|had|will|would|"
                       r"can|could|should)\b)([a-z]+)\b", re.IGNORECASE)


def _asked_act(question: str) -> str | None:
    """"Who approved X?" → approved: the first hop's evidence must state the act."""
    m = _WHO_VERB.match(question)
    return m.group(1) if m else None


def _states(first: QueryResult, bridge: Entity, words: str | None) -> bool:
    """The first hop's evidence states the description (its role noun or act, in any form:
    "led" for "lead", "owns" for "owner") in its answer or in a context line naming the
    bridge, or the bridge is known by the role itself: else the bridge is a guess and the
    chain is not followed."""
    if not words:
        return True
    if normalize_name(words) in bridge.name_keys:
        return True
    wanted = term_set(words.split()[-1])
    if not wanted:
        return False
    if wanted <= term_set(first.answer):
        return True
    names = [n.lower() for n in (bridge.name, *bridge.aliases) if len(n) >= 3]
    return any(wanted <= term_set(line) for line in first.context.splitlines()
               if any(n in line.lower() for n in names))


def _failed(search: LocalSearch, result: QueryResult) -> bool:
    return result.answer == NO_ANSWER or result.confidence < search.min_answer_score \
        or result.answer.startswith("I found nothing")


def _kinds_asked(question: str) -> frozenset[EntityType] | None:
    asked = intent_of(question).answer_type
    if asked in _ASKED_KINDS:
        return _ASKED_KINDS[asked]
    # "Which engine did X run on?": a thing, not a person
    return frozenset(set(EntityType) - {EntityType.PERSON})


def bridge_of(search: LocalSearch, answer: str, inner: str, template: str,
              kinds: frozenset[EntityType] | None, role: str | None,
              skip: frozenset[str] = frozenset()) -> Entity | None:
    """The entity the first hop's answer names that the questions do not, of the described
    kind. With role words, the one nearest a mention of them ("Lead: <name>", "<name>, the
    lead"), that mention near the anchor the inner question names ("<name> leads <anchor>");
    an entity known by the role words themselves ("the CFO" as an alias) is the bridge.
    Without role words, the first one named. ``skip``: name keys of entities that cannot be
    the bridge (a nested first part's own bridge, named again in its answer)."""
    role_key = normalize_name(role or "")
    unroled = re.sub(re.escape(role), " ", inner, flags=re.IGNORECASE) if role else inner
    asked = f" {normalize_name(unroled)} {normalize_name(template)} "
    low = answer.lower()
    role_terms = term_set(role.split()[-1]) if role else set()
    # the role in any form: "lead" meets "leads" and "led", "owner" meets "owns"
    roles = [m.span() for m in re.finditer(r"[\w'’-]+", low)
             if role_terms and term_set(m.group(0)) == role_terms]
    anchors = [m.start() for words, _ in search.named_in(unroled)
               for m in re.finditer(re.escape(words.lower()), low)]
    candidates: list[tuple[int, float, Entity]] = []
    for words, entity in search.named_in(answer):
        if (kinds is not None and entity.type not in kinds) or skip & set(entity.name_keys):
            continue
        if role_key and role_key in entity.name_keys:
            candidates.append((0, -1.0, entity))  # the role is its alias
            continue
        if any(f" {k} " in asked for k in entity.name_keys if not k.startswith("first:")):
            continue
        spots = [m.start() for m in re.finditer(re.escape(words.lower()), low)]
        if not spots:
            continue
        full = 0 if normalize_name(words) in entity.name_keys else 1
        if not roles:
            candidates.append((full, float(spots[0]), entity))
            continue
        best = float("inf")
        for at in spots:
            for start, end in roles:
                # after the role words ("Owner: X") reads closer than before them ("X, owner")
                near = at - end if at >= end else 1.5 * max(0, start - at - len(words))
                tie = min((abs(a - start) for a in anchors), default=0)
                best = min(best, near + 0.5 * tie)
        candidates.append((full, best, entity))
    if not candidates:
        return None
    return min(candidates, key=lambda c: (c[0], c[1]))[2]


def _clip(text: str, words: int) -> str:
    parts = text.split()
    return text.strip() if len(parts) <= words else " ".join(parts[:words]) + " …"


def _compose(found: Plan, first: QueryResult,
             seconds: list[tuple[Entity, str, QueryResult]]) -> QueryResult:
    names = " and ".join(b.name for b, _, _ in seconds)
    outers = " ".join(_clip(r.answer, _SECOND_WORDS // len(seconds)) for _, _, r in seconds)
    if found.joined:  # both parts asked: both answered, in order
        answer = f"{_clip(first.answer, _FIRST_WORDS)} {outers}"
        if len(seconds) > 1:
            answer = f"{names}: {answer}"
    else:  # the outer answer, then the bridge with the evidence that named it
        answer = f"{outers} — {names} ({_clip(first.answer, _FIRST_WORDS)})"
    trace = [f"chain ({found.shape}): hop 1: {found.inner} → bridge {names}"]
    trace += [f"chain ({found.shape}): hop 2: {outer} → {_clip(r.answer, 20)}"
              for _, outer, r in seconds]
    trace.append("bridge verified: hop 1's evidence names it")
    firsts, rest = list(first.citations), [c for _, _, r in seconds for c in r.citations]
    ordered = firsts + rest if found.joined else rest + firsts
    by_chunk: dict[str, Citation] = {}
    for citation in ordered:  # one citation per chunk, in order
        by_chunk.setdefault(citation.chunk_id, citation)
    citations = list(by_chunk.values())
    results = [first, *(r for _, _, r in seconds)]
    return QueryResult(
        answer=answer, citations=citations,
        confidence=round(min(r.confidence for r in results), 3), mode_used=QueryMode.LOCAL,
        context="\n".join(r.context for r in results),
        reasoning_trace=trace + [t for r in results for t in r.reasoning_trace],
        entities=[e for r in results for e in r.entities],
        facts=[f for r in results for f in r.facts])
