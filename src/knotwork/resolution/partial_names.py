"""Consolidation rules for a name written with part of another entity's name left off or
something glued on (used by :mod:`knotwork.resolution.consolidate`, after its short-form rules).

Each rule links an entity to the one cluster its name can stand for; none links when two
clusters qualify. The rules, as data (:data:`PARTIAL_RULES`, the same shape as
``consolidate.RULES``):

- ``given_only``: a person's given names without the surname ("Mary Ann" of Mary Ann Lowe);
- ``alias_given``: a given name the person is known by, with the surname ("Liz Ormsby" when
  Elizabeth Ormsby is also called "Liz");
- ``lone_part``: a lone word that is the given name or the family name of exactly one person,
  however the person's names order them ("Quang" of Dinh Van Quang, also written Quang Dinh;
  a hyphenated given name with or without its hyphen: "Seorin" of Seo-rin);
- ``role_prefix``: a person's name after a title ("CTO Mireille" of Mireille Fabre);
- ``glued_prefix``: another entity's name glued before a name of exactly one entity of the
  same kind ("Quill Research" of the Research team when Quill is the product);
- ``glued_context``: a name followed by "in <other name>" ("QT in Logistics" of QT).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.name_forms import FullName, forms_of, full_name, qualified
from knotwork.resolution.normalize import normalize_name

PARTIAL_RULES: dict[str, str] = {
    "given_only": "the given names of exactly one person without the surname (Mary Ann of "
                  "Mary Ann Lowe)",
    "alias_given": "a one-word name one person is known by, with that person's surname",
    "lone_part": "a lone word that is a given or family name of exactly one person in any of "
                 "the person's name orders, hyphens ignored",
    "role_prefix": "a person's name after a title word (CTO, VP, Head ...)",
    "glued_prefix": "another entity's name glued before a name of exactly one entity of the "
                    "same kind",
    "glued_context": "a name followed by 'in <another entity's name>'",
}

# title words written before a name ("CTO Mireille", "Head Mireille"): never part of a name
ROLE_PREFIXES: frozenset[str] = frozenset(
    {"ceo", "cto", "coo", "cfo", "cpo", "cio", "ciso", "cro", "cco", "vp", "svp", "evp", "head",
     "director", "manager", "lead", "chief", "president", "founder", "cofounder", "dr", "prof",
     "mr", "mrs", "ms", "producer", "intern"})
# the kinds a glued name may join: an organisation to an organisation, a thing to a thing
_KIND: Mapping[EntityType, str] = {
    EntityType.ORGANIZATION: "org", EntityType.PRODUCT: "thing", EntityType.TECHNOLOGY: "thing"}

Find = Callable[[str], str]
Found = tuple[str, str, str]  # source entity id, target cluster root, rule


def _key(word: str) -> str:
    return normalize_name(word).replace("-", "").replace(" ", "")


def _tokens(form: str) -> list[str]:
    return normalize_name(form).split()


def known_as(names: list[FullName], e: Entity) -> list[FullName]:
    """A person's full names, and each one-word name the person is known by ("Liz" of
    Elizabeth Ormsby) with the surname: "Liz Ormsby" is no other person."""
    lone = [normalize_name(f) for f in forms_of(e) if len(f.split()) == 1 and f[:1].isupper()]
    extra = [FullName((w,), p.surname) for p in names[:1] for w in lone if w and " " not in w]
    return names + extra


def partial_links(entities: Sequence[Entity], find: Find,
                  people: Mapping[str, Sequence[FullName]]) -> list[Found]:
    """Links by the rules of :data:`PARTIAL_RULES` (``people``: cluster root -> full names)."""
    given: dict[str, set[str]] = defaultdict(set)
    family: dict[str, set[str]] = defaultdict(set)
    given_seq: dict[tuple[str, ...], set[str]] = defaultdict(set)
    by_surname: dict[str, set[str]] = defaultdict(set)
    for root, names in people.items():
        for p in names:
            for g in p.given:
                given[_key(g)].add(root)
            family[_key(p.surname)].add(root)
            by_surname[p.surname].add(root)
            if len(p.given) >= 2:
                given_seq[tuple(_key(g) for g in p.given)].add(root)
    lone_alias: dict[str, set[str]] = defaultdict(set)  # one-word names of people
    by_name: dict[str, set[str]] = defaultdict(set)  # any entity's name or alias
    kind_names: dict[tuple[str, str], set[str]] = defaultdict(set)
    heads: set[str] = set()  # names of things that may be glued before another name
    for e in entities:
        root = find(e.id)
        for f in forms_of(e):
            toks = _tokens(f)
            if not toks:
                continue
            by_name[" ".join(toks)].add(root)
            if e.type is EntityType.PERSON and len(f.split()) == 1:
                lone_alias[_key(f)].add(root)
            else:
                heads.add(" ".join(toks))
            kind = _KIND.get(e.type)
            if kind:
                kind_names[(kind, " ".join(toks))].add(root)
                core = qualified(f)[0]
                if core and e.type is EntityType.ORGANIZATION:
                    kind_names[(kind, core)].add(root)
    out: list[Found] = []

    def one(source: Entity, roots: Iterable[str], rule: str) -> None:
        found = {r for r in roots if r != find(source.id)}
        if len(found) == 1:
            out.append((source.id, found.pop(), rule))

    def lone(word: str) -> set[str]:
        k = _key(word)
        hits = given.get(k, set()) | family.get(k, set())
        return hits if given.get(k) and len(hits) == 1 else set()

    for e in entities:
        toks = _tokens(e.name)
        if not toks:
            continue
        own = find(e.id)
        if "in" in toks[1:-1]:
            at = toks.index("in", 1)
            left, right = " ".join(toks[:at]), " ".join(toks[at + 1:])
            if by_name.get(right, set()) - {own}:
                one(e, by_name.get(left, ()), "glued_context")
                continue
        if e.type is EntityType.PERSON:
            words = e.name.split()
            if len(words) >= 2 and normalize_name(words[0]) in ROLE_PREFIXES:
                rest = " ".join(words[1:])
                one(e, by_name.get(" ".join(_tokens(rest)), set()) or lone(rest), "role_prefix")
                continue
            if len(words) == 1:
                one(e, lone(words[0]), "lone_part")
                continue
            own_name = full_name(e.name)
            if own_name is None:
                continue
            seq = tuple(_key(t) for t in (*own_name.given, own_name.surname))
            one(e, given_seq.get(seq, ()), "given_only")
            if len(own_name.given) == 1:
                one(e, lone_alias.get(_key(own_name.given[0]), set())
                    & by_surname.get(own_name.surname, set()), "alias_given")
            continue
        kind = _KIND.get(e.type)
        if kind and len(toks) >= 2:
            for cut in range(1, len(toks)):
                head, rest = " ".join(toks[:cut]), " ".join(toks[cut:])
                if head in heads and by_name.get(head, set()) - {own} and len(rest) >= 2:
                    one(e, kind_names.get((kind, rest), ()), "glued_prefix")
                    break
    return out
