"""Lone capitalised words inside sentences: a weak vote for invented product names."""

from __future__ import annotations

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.caps import caps_mentions


def test_inner_capitalised_words_and_their_sentence_openers() -> None:
    text = ("Ledgerly pays out settled claims. The batch relies on Quarry for records.\n"
            "Quarry is fed by Ledgerly nightly. Please ask Legal before Friday.\n"
            "## Release Notes For The Quarter\nTamsin Ode reviewed it.")
    found = {(m.text, m.start): (m.type, m.subtype) for m in caps_mentions(text)}
    words = {w for w, _ in found}
    assert {"Ledgerly", "Quarry", "Legal"} <= words
    assert found[("Ledgerly", 0)] == (EntityType.PRODUCT, None)  # opens a sentence, named inside another
    assert found[("Legal", text.index("Legal"))] == (EntityType.ORGANIZATION, "TEAM")
    assert not words & {"The", "Please", "Friday", "Release", "Notes", "Tamsin", "Ode"}


def test_a_sentence_opening_name_that_acts() -> None:
    text = "Tillvane pays out refunds nightly. Nobody knows why.\nAction items\n- fix it"
    words = [m.text for m in caps_mentions(text)]
    assert words == ["Tillvane"]


def test_a_word_of_a_longer_name_is_left_to_coreference() -> None:
    text = "Welcome to Brightmoor Analytics Inc.\nBrightmoor is headquartered in Leeds."
    assert "Brightmoor" not in [m.text for m in caps_mentions(text)]
