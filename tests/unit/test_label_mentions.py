"""Names a page's layout gives away: label values typed by their label, the heading system."""

from __future__ import annotations

import re

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.label_mentions import label_mentions


def _found(text: str) -> set[tuple[str, EntityType, str | None]]:
    return {(m.text, m.type, m.subtype) for m in label_mentions(text)}


def test_label_values_typed_by_their_label() -> None:
    found = _found("Owning team: Messaging (manager: Femi Adebayo)\n"
                   "Maintainers: Sara Lindgren, Ahmed El-Sayed\n"
                   "Person: Klaus Fischer; Role: Engineer; Location: Frankfurt am Main\n"
                   "Sponsor: Marguerite Lefebvre (CFO), Karan van der Berg and Li Wei\n")
    assert ("Messaging", EntityType.ORGANIZATION, "TEAM") in found
    assert {("Femi Adebayo", EntityType.PERSON, None), ("Sara Lindgren", EntityType.PERSON, None),
            ("Ahmed El-Sayed", EntityType.PERSON, None)} <= found
    assert ("Frankfurt am Main", EntityType.LOCATION, None) in found
    assert {("Marguerite Lefebvre", EntityType.PERSON, None),
            ("Karan van der Berg", EntityType.PERSON, None),
            ("Li Wei", EntityType.PERSON, None)} <= found


def test_values_that_are_not_names_of_that_kind() -> None:
    found = _found("Owner: Ana Ruiz\nLead: Data Platform Team\nLocation: remote\n"
                   "Owner: Kafka\nManager: TBD\n")
    assert not any(t is EntityType.ORGANIZATION for _, t, _ in found)  # a person, a tech
    assert ("Data Platform Team", EntityType.PERSON, None) not in found
    assert not any(t is EntityType.LOCATION for _, t, _ in found)


def test_the_heading_over_system_labels_is_the_system_everywhere_on_the_page() -> None:
    text = ("Notifications Hub\n\nOwning team: Messaging\nStack: Go, Redis\n\n"
            "Notifications Hub relies on SendGrid.\n")
    hub = [m for m in label_mentions(text) if m.text == "Notifications Hub"]
    assert [m.start for m in hub] == [0, text.rindex("Notifications Hub")]
    assert all(m.type is EntityType.PRODUCT and m.subtype == "SYSTEM" for m in hub)


def test_headings_that_are_not_a_system() -> None:
    for heading in ("Architecture Overview", "Project Atlas", "Payments Team", "Ana Ruiz"):
        assert not any(m.start == 0 for m in label_mentions(f"{heading}\n\nOwner: Messaging\n"))
    assert not any(m.start == 0 for m in label_mentions("Notifications Hub\n\nSome prose.\n"))


def test_a_markdown_heading_over_system_labels_names_the_system() -> None:
    text = "# Notifications Hub\n\nOwning team: Messaging\n"
    hub = [m for m in label_mentions(text) if m.text == "Notifications Hub"]
    assert [m.start for m in hub] == [2]


def test_a_labelled_name_ends_with_its_sentence() -> None:
    # the label's value is followed by prose: the next sentence's first word is not a surname
    found = _found("Product manager: Mei-Ling Huang. The console is used all day.\n"
                   "Owner: J. R. Smith, Ana Ruiz.\n")
    assert ("Mei-Ling Huang", EntityType.PERSON, None) in found
    assert ("J. R. Smith", EntityType.PERSON, None) in found  # initials keep their full stops
    assert ("Ana Ruiz", EntityType.PERSON, None) in found
    assert not any(re.search(r"[a-z]{2}\.", name) for name, _, _ in found)
