"""Person name forms: which short forms stand for a full name, and the differences that make
two names two people (gender-variant given names, one surname with different given names).

Pure functions over display names; :mod:`knotwork.resolution.form_match` files the forms as
keys, these say whether a key's hit may join.
"""

from __future__ import annotations

from rapidfuzz.distance import DamerauLevenshtein

from knotwork.ingestion.extraction.given_names import is_given_name
from knotwork.resolution.name_forms import FullName, full_name, nickname_formals
from knotwork.resolution.names import (
    _NAME_ENDINGS,
    doubled_letter,
    given_similarity,
    nickname_linked,
    parse_person,
    surname_similarity,
)


def person_tokens(name: str) -> tuple[str, ...]:
    """Normalised name tokens, given name first ("Smith, John" → john smith)."""
    return parse_person(name).tokens


# endings of a pet form made from the first letters of a given name ("Hanni" of Hannelore)
DIMINUTIVE_ENDINGS: tuple[str, ...] = ("ie", "i", "y")


def _given_compatible(short: str, given: str) -> bool:
    if short == given:
        return True
    if len(short) == 1:
        return given.startswith(short)
    if ending_variant(short, given):  # Luci/Lucio, Anna/Anne: another name of one stem
        return nickname_linked(short, given)
    if given in nickname_formals(short) or short in nickname_formals(given):
        return True
    if len(short) >= 4 and len(given) >= len(short) + 3 and given.endswith(short):
        return True  # the end of a long given name ("Bastian" of Sebastian)
    for end in DIMINUTIVE_ENDINGS:
        stem = short.removesuffix(end)
        if stem != short and len(stem) >= 3 and len(given) >= len(short) + 2 \
                and given.startswith(stem):
            return True
    # the first letters of a longer given name ("Ros" of Rosalind), unless what is cut off is
    # a name ending: "Luci" is not short for Lucio, it is another name of the same stem
    return 3 <= len(short) <= 5 and len(given) >= len(short) + 2 and given.startswith(short) \
        and given[len(short):] not in _NAME_ENDINGS


def is_short_form(short: str, full: str) -> bool:
    """``short`` is a shorter way of writing ``full``: a lone given name or its nickname
    ("Wil", "Wilma" of "Wilma Stroud"), initials + surname ("W. Stroud"), given name +
    surname initial ("Wilma B"), or a nickname + surname ("Wil Stroud")."""
    f = full_name(full)
    s = person_tokens(short)
    if f is None or not s:
        return False
    if len(s) == 1:
        return _given_compatible(s[0], f.given[0])
    given, last = s[:-1], s[-1]
    if len(last) == 1:  # "Wilma S"
        return len(given) == 1 and _given_compatible(given[0], f.given[0]) \
            and f.surname.startswith(last)
    if surname_similarity(last, f.surname) < 1.0:
        return False
    if all(len(g) == 1 for g in given):  # "W. Stroud", "A. C. Stroud"
        return "".join(g[0] for g in f.given).startswith("".join(given))
    return len(given) == 1 and _given_compatible(given[0], f.given[0])


def gender_variant(a: str, b: str) -> bool:
    """Two given names that are one stem with different name endings (Gabriel/Gabriela,
    Paolo/Paola, Mario/Maria): different people, never a typo."""
    ta, tb = person_tokens(a), person_tokens(b)
    if not ta or not tb:
        return False
    x, y = ta[0], tb[0]
    if x == y or len(x) == 1 or len(y) == 1:
        return False
    return ending_variant(x, y) and not nickname_linked(x, y)


def surname_conflict(a: str, b: str) -> bool:
    """Full names with one surname and given names that cannot be one person's
    (Anna Berg / Maria Berg, Jan Berg / J. Berg is no conflict)."""
    fa, fb = full_name(a), full_name(b)
    if fa is None or fb is None or surname_similarity(fa.surname, fb.surname) < 0.9:
        return False
    return not _same_given(fa, fb)


def _same_given(a: FullName, b: FullName) -> bool:
    x, y = sorted((a.given[0], b.given[0]), key=len)
    if _given_compatible(x, y):
        return True
    g = given_similarity(x, y)
    return g is not None and g >= 0.88


def ending_variant(a: str, b: str) -> bool:
    """One stem with two name endings (Gabriel/Gabriela, Luci/Lucio, Anna/Anne)."""
    stem = 0
    while stem < min(len(a), len(b)) and a[stem] == b[stem]:
        stem += 1
    return stem >= 2 and a[stem:] != b[stem:] and a[stem:] in _NAME_ENDINGS \
        and b[stem:] in _NAME_ENDINGS


def given_compatible(a: str, b: str) -> bool:
    """Two given names one person may carry, in either order: a nickname or short form of the
    other, or one edit apart in a name of five letters or more that is not a gender variant
    (Emanuel/Emmanuel, never Gabriel/Gabriela)."""
    x, y = sorted((a, b), key=len)
    if doubled_letter(x, y) or _given_compatible(x, y):
        return True
    if len(x) >= 5 and DamerauLevenshtein.distance(x, y) == 1:
        return given_similarity(x, y) is not None
    return False


# Pet forms of a given name written as a lone word, by the consolidation rule that accepts them
# (each named in ``consolidate.RULES``; the lone word is a person's and no one's given name or
# surname, and exactly one person of the tenant may carry it):
#   pet_form    first letters + a diminutive ending, or another short form of ``given_compatible``
#   pet_o       four or more first letters + "o", itself no known given name
#   two_letters the first two letters of a given name of four or more
# (measured on the two development corpora, merges right/made: pet_form 1/1, pet_o 1/1,
# two_letters 1/1; given_initials, the capitals of a hyphenated given name, 2/2)
PET_O_ENDING = "o"


def pet_form(short: str, given: str) -> str | None:
    """The rule by which the lone word ``short`` is a pet form of the given name ``given``
    ("Hanni" of Hannelore, "Rando" of Randolph, "Ev" of Evander), or ``None``."""
    if short == given or len(short) < 2:
        return None
    if len(short) == 2:
        return "two_letters" if len(given) >= 4 and given.startswith(short) else None
    if _given_compatible(short, given):
        return "pet_form"
    stem = short.removesuffix(PET_O_ENDING)
    if stem != short and len(stem) >= 4 and len(given) >= len(stem) + 2 \
            and given.startswith(stem) and not is_given_name(short):
        return "pet_o"
    return None
