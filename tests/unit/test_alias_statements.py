"""Alias statements make a second name an alias of the person, not an entity of its own."""

from __future__ import annotations

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.aliases import alias_mentions
from knotwork.ingestion.extraction.types import Mention


def _person(text: str, name: str) -> Mention:
    start = text.index(name)
    return Mention(start, start + len(name), name, EntityType.PERSON, 0.9, "spacy")


def _aliases(text: str, mentions: list[Mention], words: frozenset[str] = frozenset()) -> dict[str, str]:
    out = alias_mentions(text, mentions, lambda short, given: False, lambda w: w in words)
    return {m.text: m.refers_to or "" for m in out if m.extractor == "alias"}


def test_a_quoted_nickname_between_given_name_and_surname() -> None:
    text = 'Our new lead is Bartholomew "Barty" Quenell, starting Monday.'
    wrong = Mention(text.index("Bartholomew"), text.index(","), 'Bartholomew "Barty" Quenell',
                    EntityType.ORGANIZATION, 0.6, "spacy")
    out = alias_mentions(text, [wrong], lambda s, g: False, lambda w: False)
    assert {m.text for m in out} == {"Bartholomew Quenell", "Barty"}
    assert all(m.type is EntityType.PERSON for m in out)


def test_a_short_form_in_parentheses_is_an_alias_but_a_team_word_is_not() -> None:
    text = "Reviewers: Henrietta Moss (Hetty), Marigold Lane (Marketing)."
    found = _aliases(text, [_person(text, "Henrietta Moss"), _person(text, "Marigold Lane")],
                     words=frozenset({"marketing"}))
    assert found == {"Hetty": "Henrietta Moss"}


def test_goes_by_and_aka_after_a_person() -> None:
    text = "Ask Theodora Vance, who goes by Teddie. Then Orrin Platt, a.k.a. Ozzy, signs off."
    found = _aliases(text, [_person(text, "Theodora Vance"), _person(text, "Orrin Platt")])
    assert found == {"Teddie": "Theodora Vance", "Ozzy": "Orrin Platt"}


def test_a_quoted_name_in_parentheses_is_always_an_alias() -> None:
    text = 'Ownership: Ysolde Marr ("Pim") and Cato Brisk (Zuzu), Dara Fenn (Berlin).'
    place = Mention(text.index("Berlin"), text.index("Berlin") + 6, "Berlin", EntityType.LOCATION,
                    0.8, "spacy")
    found = _aliases(text, [_person(text, "Ysolde Marr"), _person(text, "Cato Brisk"),
                            _person(text, "Dara Fenn"), place])
    assert found == {"Pim": "Ysolde Marr", "Zuzu": "Cato Brisk"}
