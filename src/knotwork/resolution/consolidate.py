"""Entity-to-entity consolidation on strong name evidence (run after each ingest and by
``entities reresolve``).

Once two entities for one thing exist, every later mention finds its own twin; the mention-level
resolver cannot join them. This pass compares the tenant's entities with each other on name
evidence only: a link is made when a rule of :data:`RULES` holds and the other end is *unique*
in the tenant (a lone "Marsh" with two Marshes stays apart). Two people whose given names
differ in an identity-bearing way (Gabriel/Gabriela, Dan/Dani: :func:`given_similarity` says
``None``) never end in one cluster, whatever chain of links would join them.

:func:`plan_consolidation` is pure (entities in, merge groups out); :func:`consolidate` applies
the groups through :class:`~knotwork.resolution.merge.Merger` (lineage kept, each undoable).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rapidfuzz.distance import DamerauLevenshtein

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.cannot_link import CannotLink, load_cannot_link
from knotwork.resolution.form_match import abbreviates, camel_parts
from knotwork.resolution.name_forms import (
    ACRONYM,
    COMPANY_WORDS,
    TEAM_WORDS,
    FullName,
    WordTest,
    compact,
    compatible,
    folded_keys,
    forms_of,
    full_name,
    has_legal_form,
    initials_of,
    is_full_person,
    name_tokens,
    nickname_formals,
    no_words,
    qualified,
)
from knotwork.resolution.names import given_similarity, surname_similarity
from knotwork.resolution.normalize import normalize_name
from knotwork.resolution.partial_names import PARTIAL_RULES, known_as, partial_links
from knotwork.resolution.person_forms import given_compatible, pet_form

if TYPE_CHECKING:
    from knotwork.runtime import Runtime


# The rules, as data: name -> what it links (hit counts are reported per rule).
RULES: dict[str, str] = {
    "folded": "the same name once accents, case, spacing and punctuation are folded "
              "(Krüger/Krueger, Biz Ops/BizOps)",
    "typo": "one edit in a long name (Rendlesham/Rendelsham), or in one part of a person's name",
    "reordered": "the same name parts in another order (family name first or last)",
    "qualifier": "the same name but for a legal form or a team word (X GmbH, X team, Project X)",
    "company_short": "the leading words of exactly one company with a legal form (X of X Ltd)",
    "acronym": "capitals that are the initials of exactly one longer name (QLM, P&L)",
    "initials_surname": "initials and the surname of exactly one person (K. Ostrow)",
    "given_surname_initial": "the given name and surname initial of exactly one person (Nadia O)",
    "given_name": "a lone given name of exactly one person",
    "nickname": "a nickname (with or without the surname) of exactly one person's given name, "
                "from the nickname tables or as its first 3-5 letters",
    "pet_form": "a lone word, typed a person, that is first letters of exactly one person's given "
                "name plus a diminutive ending, or another short form of it (Hanni of Hannelore)",
    "pet_o": "a lone word, typed a person and no known given name, that is four or more first "
             "letters of exactly one person's given name plus 'o' (Rando of Randolph)",
    "two_letters": "a lone two-letter word, typed a person, that begins exactly one person's "
                   "given name of four letters or more (Ev of Evander)",
    "given_initials": "capitals that are the initials of exactly one person's hyphenated given "
                      "name (MJ of Mei-Jun Tan) and of no other name of the tenant",
    "lone_surname": "a lone surname of exactly one person",
    "same_surname": "one surname, given names one person may carry (a pet form, the end of a "
                    "long given name, one edit) and no other such pair in the family",
    "family_first": "given + family name of exactly one person written family name first with "
                    "a middle name (Minh Tran / Tran Van Minh)",
    "clipped": "a camel-case clipping of the words of exactly one longer name of its type "
               "(GeoData of Geographic Data)",
    **PARTIAL_RULES,
}


@dataclass(frozen=True, slots=True)
class Link:
    source_id: str
    target_id: str
    rule: str


@dataclass
class MergeGroup:
    target_id: str
    source_ids: list[str]
    rules: list[str] = field(default_factory=list)


@dataclass
class ConsolidationReport:
    entities: int = 0
    merges: int = 0
    merged_entities: int = 0
    retyped: int = 0
    retired: int = 0  # passing entities the salience pass took out of the graph
    by_rule: dict[str, int] = field(default_factory=dict)
    groups: list[MergeGroup] = field(default_factory=list)


class _Clusters:
    """Union-find over entity ids that refuses a union joining two different people."""

    def __init__(self, entities: Sequence[Entity]) -> None:
        self.parent = {e.id: e.id for e in entities}
        self.people: dict[str, list[FullName]] = {
            e.id: known_as([p for p in (full_name(f) for f in forms_of(e)) if p is not None], e)
            for e in entities if is_full_person(e)}

    def find(self, x: str) -> str:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        pa, pb = self.people.get(ra, []), self.people.get(rb, [])
        if pa and pb and not any(_same_person(x, y) for x in pa for y in pb):
            return False
        self.parent[ra] = rb
        if pa:
            self.people[rb] = [*pb, *pa]
        return True


def _family_first(a: FullName, b: FullName) -> bool:
    """"Minh Tran" / "Tran Van Minh": the family name first, a middle name between."""
    x, y = sorted((a, b), key=lambda p: len(p.given))
    return len(x.given) == 1 and len(y.given) == 2 and x.given[0] == y.surname \
        and x.surname == y.given[0]


def _same_person(a: FullName, b: FullName) -> bool:
    if sorted((*a.given, a.surname)) == sorted((*b.given, b.surname)) or _family_first(a, b):
        return True  # "Lee Min-seo" / "Min-seo Lee": family name first or last
    if (*a.given, a.surname) == b.given or (*b.given, b.surname) == a.given:
        return True  # "Mary Ann" / "Mary Ann Lowe": the given names alone
    if surname_similarity(a.surname, b.surname) < 0.9:
        return False
    if a.surname == b.surname and given_compatible(a.given[0], b.given[0]):
        return True  # Emanuel/Emmanuel, Hanni/Hannelore, Bastian/Sebastian (same_surname rule)
    x, y = sorted((a.given[0], b.given[0]), key=len)
    if x in nickname_formals(y) or y in nickname_formals(x) or (
            3 <= len(x) <= 5 and y.startswith(x) and len(y) >= len(x) + 2):
        return True  # a short form of the given name (the nickname rule's evidence)
    g = given_similarity(a.given[0], b.given[0])
    return g is not None and g >= 0.88


def _link_pairs(entities: Sequence[Entity], is_word: WordTest) -> list[Link]:
    """Full-form links: folded names, typos, qualifiers."""
    links: list[Link] = []
    by_key: dict[str, list[Entity]] = defaultdict(list)
    for e in entities:
        for f in forms_of(e):
            for k in folded_keys(f):
                by_key[k].append(e)
    for group in by_key.values():
        ids = list(dict.fromkeys(e.id for e in group))
        links += [Link(a, ids[0], "folded") for a in ids[1:]]
    # qualifiers: "X team" / "Team X" / "X GmbH" / "Project X" share X
    by_core: dict[str, list[tuple[Entity, str]]] = defaultdict(list)
    for e in entities:  # filed under every form's core, with the marker of its name
        kind = qualified(e.name)[1]  # (or of the form, when the form has one: "X team")
        for f in forms_of(e):
            core, own = qualified(f)
            if len(core) >= 3:
                by_core[core].append((e, kind if own == "bare" else own))
    for e in entities:  # the source by its name only: an alias may be a looser word
        core, kind = qualified(e.name)
        if kind not in ("bare", "team", "site"):
            continue
        hits = {x.id for x, k in by_core.get(core, []) if x.id != e.id and compatible(
            kind, k, e if kind == "bare" else x, is_word)}
        if len(hits) == 1:
            links.append(Link(e.id, hits.pop(), "qualifier"))
    links += _typo_links(entities)
    return links


def _nickname_pair(a: FullName, b: FullName) -> bool:
    x, y = sorted((a.given[0], b.given[0]), key=len)
    return x != y and y in nickname_formals(x)


def _typo_links(entities: Sequence[Entity]) -> list[Link]:
    links: list[Link] = []
    people = [(e, p) for e in entities if is_full_person(e)
              for p in (full_name(f) for f in forms_of(e)) if p is not None]
    by_given: dict[str, list[tuple[Entity, FullName]]] = defaultdict(list)
    for e, p in people:
        by_given[p.given[0]].append((e, p))
    by_tokens: dict[tuple[str, ...], list[Entity]] = defaultdict(list)
    by_surname: dict[str, list[tuple[Entity, FullName]]] = defaultdict(list)
    for e, p in people:
        by_tokens[tuple(sorted((*p.given, p.surname)))].append(e)
        by_surname[p.surname].append((e, p))
    for same in by_tokens.values():
        ids = list(dict.fromkeys(e.id for e in same))
        links += [Link(a, ids[0], "reordered") for a in ids[1:]]
    by_ends: dict[frozenset[str], list[tuple[Entity, FullName]]] = defaultdict(list)
    for e, p in people:  # "Minh Tran" and "Tran Van Minh" share {minh, tran}
        if len(p.given) <= 2:
            by_ends[frozenset((p.given[0], p.surname))].append((e, p))
    for group in by_ends.values():
        pairs = [(a, b) for i, (a, pa) in enumerate(group) for b, pb in group[i + 1:]
                 if a.id != b.id and _family_first(pa, pb)]
        if len(pairs) == 1:
            links.append(Link(pairs[0][0].id, pairs[0][1].id, "family_first"))
    for family in by_surname.values():  # a typo in the given name (Ottilie/Otilie)
        for i, (a, pa) in enumerate(family):
            for b, pb in family[i + 1:]:
                if a.id != b.id and _nickname_pair(pa, pb) and sum(
                        _nickname_pair(pa, pc) or _nickname_pair(pb, pc) for _, pc in family) == 1:
                    links.append(Link(a.id, b.id, "nickname"))  # Jo Marsh / Joanna Marsh
                g = given_similarity(pa.given[0], pb.given[0])
                if a.id != b.id and pa.given[0] != pb.given[0] and g is not None and g >= 0.88 \
                        and len(pa.given[0]) > 1 and len(pb.given[0]) > 1 \
                        and DamerauLevenshtein.distance(pa.given[0], pb.given[0]) == 1:
                    links.append(Link(a.id, b.id, "typo"))
    for family in by_surname.values():  # one compatible pair in a family: Hanni/Hannelore
        pairs = [(a, b) for i, (a, pa) in enumerate(family) for b, pb in family[i + 1:]
                 if a.id != b.id and pa.given[0] != pb.given[0]
                 and given_compatible(pa.given[0], pb.given[0])]
        ends = [x.id for pair in pairs for x in pair]
        for a, b in pairs:
            if ends.count(a.id) == 1 and ends.count(b.id) == 1:
                links.append(Link(a.id, b.id, "same_surname"))
    for group in by_given.values():
        for i, (a, pa) in enumerate(group):
            for b, pb in group[i + 1:]:
                if a.id != b.id and pa.surname != pb.surname and len(pa.given) == len(pb.given) \
                        and DamerauLevenshtein.distance(pa.surname, pb.surname) == 1 \
                        and min(len(pa.surname), len(pb.surname)) >= 4:
                    links.append(Link(a.id, b.id, "typo"))
    # other names: one edit in a long, purely alphabetic name with the same first letter
    words: dict[str, list[Entity]] = defaultdict(list)
    for e in entities:
        if is_full_person(e):
            continue
        for f in forms_of(e):
            c = compact(f)
            if len(c) >= 6 and c.isalpha():
                words[c].append(e)
    keys = sorted(words)
    by_len: dict[int, list[str]] = defaultdict(list)
    for k in keys:
        by_len[len(k)].append(k)
    for k in keys:
        for other in (*by_len.get(len(k), ()), *by_len.get(len(k) + 1, ())):
            if other <= k and len(other) == len(k):
                continue
            if other[0] == k[0] and DamerauLevenshtein.distance(k, other, score_cutoff=1) == 1:
                for a in words[k]:
                    for b in words[other]:
                        if a.id != b.id and not (is_full_person(a) or is_full_person(b)):
                            links.append(Link(a.id, b.id, "typo"))
    return links


def _short_links(entities: Sequence[Entity], clusters: _Clusters) -> list[Link]:
    """Short forms to the one cluster they can stand for."""
    people: dict[str, list[FullName]] = defaultdict(list)  # root -> names
    for eid, names in clusters.people.items():
        people[clusters.find(eid)] += names
    given_of: dict[str, set[str]] = defaultdict(set)
    surname_of: dict[str, set[str]] = defaultdict(set)
    for root, names in people.items():
        for p in names:
            for g in p.given:
                given_of[g].add(root)
            surname_of[p.surname].add(root)
    companies: dict[str, set[str]] = defaultdict(set)  # leading words -> roots
    initials: dict[str, set[str]] = defaultdict(set)
    forms_of_root: dict[str, list[tuple[str, EntityType]]] = defaultdict(list)
    for e in entities:
        if e.type is EntityType.PERSON:
            continue
        root = clusters.find(e.id)
        for f in forms_of(e):
            toks = normalize_name(f).split()
            if has_legal_form(f) or (len(toks) >= 2 and toks[-1] in COMPANY_WORDS):
                for n in range(1, len(toks) - (0 if toks[-1] in COMPANY_WORDS else 1)):
                    companies[" ".join(toks[:n])].add(root)
            for ini in initials_of(f):
                initials[ini].add(root)
            forms_of_root[root].append((f, e.type))
    links: list[Link] = []

    def one(roots: Iterable[str], source: Entity, rule: str) -> None:
        found = {r for r in roots if r != clusters.find(source.id)}
        if len(found) == 1:
            links.append(Link(source.id, found.pop(), rule))

    for e in entities:
        key = " ".join(normalize_name(e.name).split())
        if key in companies and not has_legal_form(e.name) and e.type is not EntityType.TECHNOLOGY:
            one(companies[key], e, "company_short")  # "Bramble Hill" of "Bramble Hill Studios"
        if (e.type is EntityType.PERSON and full_name(e.name) is not None) \
                or e.type is EntityType.TECHNOLOGY:
            continue
        for f in [e.name]:  # aliases were judged when they joined; a name speaks for itself
            raw = f.strip()
            toks = [normalize_name(raw).replace(" ", "-")] if " " not in raw and "-" in raw \
                else name_tokens(raw)
            if not toks:
                continue
            letters = re.sub(r"[^a-z]", "", raw.lower())
            parts = camel_parts(raw)
            if parts and e.type is not EntityType.PERSON:  # "GeoData": Geographic Data
                one((r for r in initials.get("".join(p[0] for p in parts), ()) if any(
                    t is e.type and abbreviates(raw, f) for f, t in forms_of_root[r])),
                    e, "clipped")
                continue
            if ACRONYM.match(raw) and (len(letters) >= 3 or "&" in raw):
                one(initials.get(letters, ()), e, "acronym")
                if initials.get(letters):
                    continue
            if ACRONYM.match(raw) and raw.isalpha() and 2 <= len(raw) <= 3 \
                    and not initials.get(letters) and (hit := _given_initials(people, letters)):
                one(hit, e, "given_initials")
                continue
            if ACRONYM.match(raw) and (len(letters) >= 3 or "&" in raw):
                continue
            if len(toks) >= 2 and all(len(t) == 1 for t in toks[:-1]) and len(toks[-1]) > 1:
                one((r for r in surname_of.get(toks[-1], ()) if any(
                    p.surname == toks[-1] and "".join(g[0] for g in p.given).startswith("".join(toks[:-1]))
                    for p in people[r])), e, "initials_surname")
            elif len(toks) == 2 and len(toks[1]) == 1 and len(toks[0]) > 1:
                one((r for r in given_of.get(toks[0], ()) if any(
                    p.given[0] == toks[0] and p.surname[0] == toks[1] for p in people[r])),
                    e, "given_surname_initial")
            elif len(toks) == 1 and toks[0].replace("-", "").isalpha() and len(toks[0]) >= 2:
                t = toks[0]
                own = clusters.find(e.id)
                if given_of.get(t, set()) - {own}:
                    if t not in surname_of:
                        one(given_of[t], e, "given_name")
                    continue
                formals = nickname_formals(t)
                nick = {r for g in formals for r in given_of.get(g, ())}
                short = {r for g, roots in given_of.items() if 3 <= len(t) <= 5
                         and len(g) >= len(t) + 2 and g.startswith(t) for r in roots}
                if nick or short:
                    one(nick | short, e, "nickname")
                elif t in surname_of and len(t) >= 4 and e.type is EntityType.PERSON:
                    one(surname_of[t], e, "lone_surname")
                elif e.type is EntityType.PERSON and t not in surname_of:
                    pets = {(r, rule) for g, roots in given_of.items()
                            if (rule := pet_form(t, g)) is not None for r in roots}
                    if len({r for r, _ in pets}) == 1:
                        one([r for r, _ in pets], e, min(rule for _, rule in pets))
            elif len(toks) == 2 and e.type is EntityType.PERSON and toks[1] in surname_of:
                formals = nickname_formals(toks[0])
                one((r for r in surname_of[toks[1]] if any(
                    p.surname == toks[1] and p.given[0] in formals for p in people[r])),
                    e, "nickname")
    return links


def _given_initials(people: dict[str, list[FullName]], letters: str) -> set[str]:
    """The people ``letters`` can stand for when they are the initials of a hyphenated given
    name; empty when any person's other initials (given and surname) are the same letters."""
    hyphenated: set[str] = set()
    for root, names in people.items():
        for p in names:
            parts = [w for g in p.given for w in g.split("-") if w]
            if "".join(w[0] for w in parts) == letters and any("-" in g for g in p.given):
                hyphenated.add(root)
            elif "".join(w[0] for w in (*parts, p.surname)) == letters \
                    or p.given[0][0] + p.surname[0] == letters:
                return set()
    return hyphenated


def _by_root(clusters: _Clusters) -> dict[str, list[FullName]]:
    out: dict[str, list[FullName]] = defaultdict(list)
    for eid, names in clusters.people.items():
        out[clusters.find(eid)] += names
    return out


def plan_consolidation(entities: Sequence[Entity], is_word: WordTest = no_words) -> list[MergeGroup]:
    """Merge groups over the tenant's entities: each group's target is its best-evidenced
    full form (a full person name, then a legal form or team word, then evidence)."""
    clusters = _Clusters(entities)
    rules: dict[str, list[str]] = defaultdict(list)
    for link in _link_pairs(entities, is_word):
        if clusters.union(link.source_id, link.target_id):
            rules[link.source_id].append(link.rule)
    for _ in range(2):  # a second pass: a join can make another short form unique
        links = _short_links(entities, clusters) + [Link(*x) for x in partial_links(
            entities, clusters.find, _by_root(clusters))]
        for link in links:
            if clusters.union(link.source_id, link.target_id):
                rules[link.source_id].append(link.rule)
    members: dict[str, list[Entity]] = defaultdict(list)
    for e in entities:
        members[clusters.find(e.id)].append(e)
    groups: list[MergeGroup] = []
    for ms in members.values():
        if len(ms) < 2:
            continue
        target = max(ms, key=_target_rank)
        sources = sorted(e.id for e in ms if e.id != target.id)
        used = sorted({r for s in sources for r in rules.get(s, [])} | {
            r for e in ms for r in rules.get(e.id, [])})
        groups.append(MergeGroup(target.id, sources, used))
    return sorted(groups, key=lambda g: g.target_id)


def _target_rank(e: Entity) -> tuple[int, int, int, int, int, str]:
    marked = has_legal_form(e.name) or normalize_name(e.name).split()[-1:] in (
        [[w] for w in TEAM_WORDS])
    return (int(marked) - int(qualified(e.name)[1] == "site"),
            int(full_name(e.name) is not None and e.type is EntityType.PERSON),
            int(is_full_person(e)), e.evidence_count, len(e.name), e.id)


def retypes(entities: Sequence[Entity]) -> dict[str, EntityType]:
    """Entities whose own name states their kind otherwise than their type: a legal form or
    a team word at the end ("Greyfen Art Co", "Payments team") is an organisation."""
    out: dict[str, EntityType] = {}
    for e in entities:
        kind = qualified(e.name)[1]
        if kind in ("legal", "team") and e.type is not EntityType.ORGANIZATION:
            out[e.id] = EntityType.ORGANIZATION
    return out


def allowed_groups(groups: Sequence[MergeGroup], entities: Sequence[Entity],
                   cannot: CannotLink) -> list[MergeGroup]:
    """The groups less every source a cannot-link constraint keeps apart from the target or
    from a source already kept; a group left with no source is dropped."""
    if not cannot:
        return list(groups)
    by_id = {e.id: e for e in entities}
    out: list[MergeGroup] = []
    for g in groups:
        kept: list[Entity] = [by_id[g.target_id]]
        for source_id in g.source_ids:
            source = by_id[source_id]
            if all(cannot.allows_pair(source, k) for k in kept):
                kept.append(source)
        if len(kept) > 1:
            out.append(MergeGroup(g.target_id, [k.id for k in kept[1:]], list(g.rules)))
    return out


def _vocabulary(rt: Runtime) -> WordTest:
    """Common English words: the extractor's copy of its NER model's vocabulary, if any."""
    test = getattr(rt.extractor, "is_common_word", None)
    return test if callable(test) else no_words


def consolidate(rt: Runtime, group_id: str, *, dry_run: bool = False) -> ConsolidationReport:
    """Plan and (unless ``dry_run``) apply the merges; needs the SQL document store."""
    from knotwork.resolution.merge import Merger
    from knotwork.resolution.retype import retype
    from knotwork.resolution.service import resolution_sql

    # types from all the evidence first: a mistyped twin then finds its kind's twin
    before = 0 if dry_run else retype(rt, group_id, _vocabulary(rt))
    entities = rt.graph.list_entities(group_id)
    groups = allowed_groups(plan_consolidation(entities, _vocabulary(rt)), entities,
                            load_cannot_link(rt, group_id))
    report = ConsolidationReport(entities=len(entities), groups=groups, retyped=before)
    for g in groups:
        for r in g.rules:
            report.by_rule[r] = report.by_rule.get(r, 0) + 1
    report.merges = len(groups)
    report.merged_entities = sum(len(g.source_ids) for g in groups)
    if dry_run:
        return report
    sql = resolution_sql(rt)
    if sql is None:
        return report
    merger = Merger(rt, group_id, sql)
    for g in groups:
        merger.merge(g.target_id, g.source_ids, actor="consolidate", confidence=0.95)
    after = rt.graph.list_entities(group_id)
    kinds = retypes(after)
    if kinds:
        rt.graph.upsert_entities([e.model_copy(update={"type": kinds[e.id], "subtype": None})
                                  for e in after if e.id in kinds])
    report.retyped += len(kinds) + retype(rt, group_id, _vocabulary(rt))  # after the merges
    if rt.settings.entity_salience:
        from knotwork.resolution.salience import retire_passing

        report.retired = retire_passing(rt, group_id, _vocabulary(rt))
    return report
