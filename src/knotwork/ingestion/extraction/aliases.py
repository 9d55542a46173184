"""Alias statements: a second name the text gives a person is an alias of that person, not an
entity of its own.

The patterns are data (:data:`ALIAS_PATTERNS`, each with a name):

- ``quoted``: 'First "Nick" Last' (straight or curly quotes);
- ``parenthesis``: 'First Last ("Nick")', or "First Last (Nick)" when Nick is a short form of
  the given name, a name the nickname tables link to it, or a short uncommon word no other
  extractor typed (a team "(Glassworks)" or a place "(Vellmar)" is left alone);
- ``statement``: "..., who goes by Nick", "a.k.a. Nick", "also known as Nick" after a person.

Each hit becomes an ``alias`` mention that refers to the full name (``_cluster`` files it as an
alias of the person's chunk entity); what other extractors read into the same words is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.types import Mention

_NAME = r"[A-Z][^\W\d_]+(?:-[A-Z]?[^\W\d_]+)?"
ALIAS_PATTERNS: dict[str, re.Pattern[str]] = {
    "quoted": re.compile(rf"(?<![\w\"“])({_NAME})[ \t]+[\"“]({_NAME})[\"”][ \t]+({_NAME}(?:[ \t]+{_NAME})?)"),
    "parenthesis": re.compile(rf"[ \t]*(?:</?\w+>)*[ \t]*\([ \t]*([\"“]?)({_NAME})[\"”]?[ \t]*\)"),
    "statement": re.compile(rf"\b(?:goes by|went by|a\.k\.a\.?|aka|also known as|known as)[ \t]+"
                            rf"[\"“]?({_NAME})[\"”]?"),
}
NicknameTest = Callable[[str, str], bool]  # (short form, given name) -> linked by a table


def _short_form(nick: str, given: str, linked: NicknameTest, is_word: Callable[[str], bool]) -> bool:
    """A nickname of the given name: the tables link them, or it starts like the given name
    and is no common word ("Rosa Ilves (Quarry)" names her team)."""
    n, g = nick.lower(), given.lower()
    return n != g and (linked(n, g) or (g.startswith(n[:2]) and not is_word(n)))


def alias_mentions(text: str, mentions: list[Mention], linked: NicknameTest,
                   is_word: Callable[[str], bool]) -> list[Mention]:
    """``mentions`` with the text's alias statements applied (sorted by position)."""
    added: list[Mention] = []
    covered: list[tuple[int, int]] = []
    for hit in ALIAS_PATTERNS["quoted"].finditer(text):
        full = f"{hit.group(1)} {hit.group(3)}"
        added.append(Mention(hit.start(1), hit.end(3), full, EntityType.PERSON, 0.95, "rule"))
        added.append(Mention(hit.start(2), hit.end(2), hit.group(2), EntityType.PERSON, 0.95,
                             "alias", refers_to=full))
        covered.append((hit.start(1), hit.end(3)))
    people = [m for m in mentions if m.type is EntityType.PERSON and m.refers_to is None
              and m.extractor != "coref" and len(m.text.split()) >= 2]
    for person in people:
        hit = ALIAS_PATTERNS["parenthesis"].match(text, person.end)
        if hit is None:
            continue
        nick, start, end = hit.group(2), hit.start(2), hit.end(2)
        other = any(m.start < end and start < m.end and m.type is not EntityType.PERSON
                    for m in mentions)  # "(Vellmar)": a place the NER read there
        if not (hit.group(1) or _short_form(nick, person.text.split()[0], linked, is_word)
                or (not other and not is_word(nick.lower()) and len(nick) <= 8)):
            continue
        added.append(Mention(start, end, nick, EntityType.PERSON, 0.9, "alias",
                             refers_to=person.text))
        covered.append((start, end))
    for hit in ALIAS_PATTERNS["statement"].finditer(text):
        before = [p for p in people if p.end <= hit.start() and hit.start() - p.end <= 60
                  and not re.search(r"[.!?\n]", text[p.end:hit.start()])]
        if not before:
            continue
        person = before[-1]
        added.append(Mention(hit.start(1), hit.end(1), hit.group(1), EntityType.PERSON, 0.9,
                             "alias", refers_to=person.text))
        covered.append((hit.start(1), hit.end(1)))
    if not added:
        return mentions
    kept = [m for m in mentions if not any(m.start < b and a < m.end for a, b in covered)]
    return sorted([*kept, *added], key=lambda m: (m.start, m.end))
