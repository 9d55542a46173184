"""Blocking: the keys under which a name is filed, so candidate lookup reads only the entities
that share a key (never all pairs). Rules are data (splink style): a list of
:class:`BlockingRule` serialises to JSON and back, and decides which key families are made.

Key families (prefix: meaning): ``n:`` full normalised name (and known variants), ``nk:`` formal
given name + surname (Bob/Robert), ``is:`` initial + surname, ``h:`` chat handle forms,
``g:`` formal given name (lone first names), ``ss:`` Soundex of the surname + initial,
``t:`` each name token, ``p:`` 4-character prefix, ``sx:`` Soundex, ``mp:`` Metaphone and
``ny:`` NYSIIS of the whole name (jellyfish has no Double Metaphone: these two phonetic codes
stand in for its primary/secondary pair), ``l<band>:`` random-hyperplane LSH buckets of the
embedding; ``f?:`` the name-form keys of :data:`~knotwork.resolution.form_match.FORM_RULES`
(compact, transliterated, qualifier-stripped, acronym, initial + surname, given + surname
initial, given name, nickname).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

import jellyfish
import numpy as np
from metaphone import doublemetaphone
from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.models import EntityType
from knotwork.resolution.exact import lookup_keys
from knotwork.resolution.form_match import form_keys
from knotwork.resolution.names import formal_names, handle_forms, parse_person
from knotwork.resolution.normalize import normalize_name

_STOP = frozenset({"the", "and", "of", "for", "team", "project", "service", "inc", "ltd", "llc"})


class BlockingRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    family: str  # one of FAMILIES
    length: int = Field(default=4, ge=1, le=16)  # prefix length
    bands: int = Field(default=4, ge=1, le=16)  # LSH
    bits: int = Field(default=10, ge=4, le=24)
    person_only: bool = False
    # family "attribute": the record's values of these attributes (all present), e.g.
    # ("date_of_birth",) or ("postcode", "surname"); ``prefix`` keeps the first characters
    attributes: tuple[str, ...] = ()
    prefix: int | None = Field(default=None, ge=1, le=64)


FAMILIES = ("full", "nickname", "initials", "handle", "given", "surname_soundex", "token",
            "prefix", "soundex", "metaphone", "nysiis", "lsh", "attribute", "form")

DEFAULT_RULES: tuple[BlockingRule, ...] = (
    BlockingRule(family="full"),
    BlockingRule(family="form"),
    BlockingRule(family="nickname", person_only=True),
    BlockingRule(family="initials", person_only=True),
    BlockingRule(family="handle", person_only=True),
    BlockingRule(family="given", person_only=True),
    BlockingRule(family="surname_soundex", person_only=True),
    BlockingRule(family="token"),
    BlockingRule(family="prefix", length=4),
    BlockingRule(family="soundex"),
    BlockingRule(family="metaphone"),
    BlockingRule(family="nysiis"),
    BlockingRule(family="lsh", bands=4, bits=10),
)


@lru_cache(maxsize=32)
def _planes(dimension: int, total_bits: int, seed: int = 1729) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((total_bits, dimension)).astype(np.float32)


def lsh_keys(vector: Sequence[float] | np.ndarray, bands: int, bits: int) -> list[str]:
    vec = np.asarray(vector, dtype=np.float32)
    signs = (_planes(vec.shape[0], bands * bits) @ vec) > 0
    weights = 1 << np.arange(bits, dtype=np.int64)
    return [f"l{band}:{int(signs[band * bits:(band + 1) * bits] @ weights)}"
            for band in range(bands)]


def _person_keys(name: str, family: str) -> list[str]:
    person = parse_person(name)
    tokens = person.tokens
    if family == "handle":
        out = [f"h:{person.handle}"] if person.handle else []
        return out + [f"h:{h}" for h in sorted(handle_forms(person))]
    if not tokens:
        return []
    if len(tokens) == 1:
        return [f"g:{f}" for f in formal_names(tokens[0])] if family == "given" else []
    given, surname = tokens[0], tokens[-1]
    if family == "nickname":
        return [f"nk:{f} {surname}" for f in formal_names(given)]
    if family == "initials":
        return [f"is:{given[0]} {surname}"]
    if family == "given":
        return [f"g:{f}" for f in formal_names(given)] if len(given) > 1 else []
    if family == "surname_soundex":
        return [f"ss:{jellyfish.soundex(surname)}{given[0]}"]
    return []


def name_keys(name: str, etype: EntityType | None, rules: Sequence[BlockingRule]) -> list[str]:
    """Blocking keys of one name (mention text, display name or alias)."""
    if rules is DEFAULT_RULES or (len(rules) == len(DEFAULT_RULES) and all(
            a is b for a, b in zip(rules, DEFAULT_RULES, strict=True))):
        # the same names come back batch after batch: their keys are kept
        return list(_default_name_keys(name, etype))
    return _name_keys(name, etype, rules)


@lru_cache(maxsize=1 << 15)
def _default_name_keys(name: str, etype: EntityType | None) -> tuple[str, ...]:
    return tuple(_name_keys(name, etype, DEFAULT_RULES))


def _name_keys(name: str, etype: EntityType | None, rules: Sequence[BlockingRule]) -> list[str]:
    key = normalize_name(name)
    person = etype in (None, EntityType.PERSON)
    compact = key.replace(" ", "")
    out: list[str] = []
    for rule in rules:
        fam = rule.family
        if rule.person_only or fam == "lsh":
            if person and fam != "lsh":
                out += _person_keys(name, fam)
            continue
        if not compact:
            continue
        if fam == "full":
            out.append(f"n:{key}")
            if person:
                tokens = parse_person(name).tokens
                if tokens:
                    out.append(f"n:{' '.join(tokens)}")
            if etype is not None:
                out += [f"n:{k}" for k in lookup_keys(key, etype)[1:] if not k.startswith("first:")]
        elif fam == "form":  # the name-form rules of form_match (fc:, fq:, fa:, fi: ...)
            out += form_keys(name, etype)
        elif fam == "token":
            out += [f"t:{t}" for t in key.split() if len(t) >= 3 and t not in _STOP]
        elif fam == "prefix":
            out.append(f"p:{compact[:rule.length]}")
        elif fam == "soundex" and compact[0].isalpha():
            out.append(f"sx:{jellyfish.soundex(key)}")
        elif fam == "metaphone" and compact.isascii() and compact[0].isalpha():
            # Double Metaphone (design doc 003): primary and alternate codes
            primary, alternate = doublemetaphone(compact)
            out += [f"mp:{code}" for code in dict.fromkeys((primary, alternate)) if code]
        elif fam == "nysiis" and compact.isascii() and compact[0].isalpha():
            out.append(f"ny:{jellyfish.nysiis(compact)}")
    return out


def attribute_keys(rules: Sequence[BlockingRule], attributes: Mapping[str, str] | None
                   ) -> list[str]:
    """``a:`` keys of the attribute rules: the joined values, when every one is present."""
    out: list[str] = []
    if not attributes:
        return out
    for rule in rules:
        if rule.family != "attribute" or not rule.attributes:
            continue
        values = [" ".join(str(attributes.get(a) or "").lower().split()) for a in rule.attributes]
        if all(values):
            if rule.prefix:
                values = [v[: rule.prefix] for v in values]
            out.append("a:" + "|".join(f"{a}={v}" for a, v in zip(rule.attributes, values,
                                                                   strict=True)))
    return out


def blocking_keys(names: Iterable[str], etype: EntityType | None,
                  rules: Sequence[BlockingRule] = DEFAULT_RULES,
                  embedding: Sequence[float] | np.ndarray | None = None,
                  identifiers: Mapping[str, str] | None = None,
                  attributes: Mapping[str, str] | None = None) -> list[str]:
    """Keys of a whole record (identifiers, attribute rules, name + aliases, embedding), most
    selective first."""
    keys: list[str] = [f"id:{k}={v.strip().lower()}" for k, v in sorted((identifiers or {}).items())
                       if v and v.strip()]
    keys += attribute_keys(rules, attributes)
    for name in names:
        keys += name_keys(name, etype, rules)
    if embedding is not None:
        for rule in rules:
            if rule.family == "lsh":
                keys += lsh_keys(embedding, rule.bands, rule.bits)
    order = {f: i for i, f in enumerate(("id", "a", "n", "fc", "fq", "nk", "fn", "h", "is",
                                         "fi", "fs", "fa", "ss", "t", "g", "fg", "p", "sx",
                                         "mp", "ny"))}
    unique = list(dict.fromkeys(k for k in keys if len(k) > 2))
    return sorted(unique, key=lambda k: order.get(k.split(":", 1)[0], len(order)))


class InMemoryBlockingIndex:
    """key -> postings (int record ids), capped per key and in total on lookup.

    Keys are held as 64-bit hashes (a process-local structure; persisted stores keep the
    strings). Lookup cost is O(keys + postings read), independent of the index size.
    """

    def __init__(self, per_key: int = 100, total: int = 500) -> None:
        self.per_key = per_key
        self.total = total
        self._postings: dict[int, array] = {}

    def __len__(self) -> int:
        return len(self._postings)

    def add(self, record: int, keys: Iterable[str]) -> None:
        for key in keys:
            h = hash(key)
            post = self._postings.get(h)
            if post is None:
                self._postings[h] = array("l", (record,))
            else:
                post.append(record)

    def remove(self, record: int, keys: Iterable[str]) -> None:
        for key in keys:
            post = self._postings.get(hash(key))
            if post is not None and record in post:
                post.remove(record)

    def lookup(self, keys: Iterable[str]) -> tuple[list[int], int]:
        """Candidate records (first-seen order) and how many postings were read."""
        seen: dict[int, None] = {}
        read = 0
        for key in keys:
            post = self._postings.get(hash(key))
            if not post:
                continue
            window = post[-self.per_key:]  # the newest records of a crowded key
            read += len(window)
            for record in window:
                seen.setdefault(record, None)
            if len(seen) >= self.total:
                break
        return list(seen)[: self.total], read
