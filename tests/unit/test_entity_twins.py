"""Twins and confusables at the mention level: identifiers with all their number groups,
numbered names, names that differ only in a number, and person guesses whose words say they
name an effort or a unit (their first word is no given name)."""

from __future__ import annotations

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.caps import caps_mentions
from knotwork.ingestion.extraction.coref import given_name_mentions
from knotwork.ingestion.extraction.types import Mention
from knotwork.resolution.exact import entity_keys
from knotwork.resolution.form_match import numbers_differ, versioned_abbreviation
from knotwork.resolution.name_forms import full_name, has_non_person_word
from knotwork.resolution.scoring import (
    CandidateRecord,
    MentionQuery,
    ResolutionConfig,
    name_similarity,
    score_candidate,
)

P = EntityType.PERSON


def test_a_capitalised_word_before_a_number_is_no_name_of_its_own() -> None:
    text = "We shipped everything before Harvest 3 went live. The queue then moved to Gristmill for good."
    words = [m.text for m in caps_mentions(text)]
    assert "Harvest" not in words and "Gristmill" in words


def test_names_that_differ_only_in_a_number_never_match() -> None:
    assert numbers_differ("INC-2031-044", "INC-2031-012") and numbers_differ("Wave 2", "Wave 3")
    assert not numbers_differ("OPS-077", "OPS 77") and not numbers_differ("Quillmark", "Quillmark 4")
    cfg = ResolutionConfig()
    got = score_candidate(cfg, MentionQuery("OPS-78", EntityType.CONCEPT, 1.0),
                          CandidateRecord("x", "OPS-77", EntityType.CONCEPT))
    assert got.score < cfg.match_threshold and got.name_level == "different number"
    same = score_candidate(cfg, MentionQuery("OPS 77", EntityType.CONCEPT, 1.0),
                           CandidateRecord("x", "OPS-77", EntityType.CONCEPT))
    assert same.score >= cfg.match_threshold


def test_an_abbreviation_with_the_same_version_number_and_a_team_acronym() -> None:
    assert versioned_abbreviation("QX4.2", "Quartz Xylo 4.2")
    assert not versioned_abbreviation("QX4.1", "Quartz Xylo 4.2")
    assert name_similarity("QX 4.2", "Quartz Xylo 4.2", False) >= 0.92
    assert name_similarity("TB team", "Tessel Bridge", False) >= 0.92


def test_a_person_guess_naming_an_effort_or_a_unit_lends_no_given_name() -> None:
    assert has_non_person_word("Brindle Migration") and has_non_person_word("Brindle Support")
    assert not has_non_person_word("Ottilie Wrenfield") and not has_non_person_word("Min-ji Sorell")
    assert full_name("Brindle Migration") is None and full_name("Ottilie Wrenfield") is not None
    text = "Brindle Migration starts in May. Brindle will replace the old ledger. Ottilie Wrenfield agreed; Ottilie signs off."
    found = [Mention(0, 17, "Brindle Migration", P, 0.8, "spacy"),
             Mention(text.index("Ottilie Wrenfield"), text.index("Ottilie Wrenfield") + 17, "Ottilie Wrenfield", P,
                     0.8, "spacy")]
    linked = {m.text: m.refers_to for m in given_name_mentions(text, found)}
    assert linked.get("Ottilie") == "Ottilie Wrenfield" and "Brindle" not in linked
    assert not any(k.startswith("first:") for k in entity_keys("brindle migration", [], P))
    assert "first:ottilie" in entity_keys("ottilie marsh", [], P)
    assert name_similarity("Brindle", "Brindle Migration", True) < 0.85


def test_a_guessed_common_word_standing_as_a_row_key_or_a_heading_is_dropped() -> None:
    from knotwork.ingestion.extraction.entity_filter import label_words

    text = ("## Rationale\n\nOption: Rent a vault; Outcome: Declined, too costly\n"
            "Signer: Odile Brask · Slot: Sun 04:00\nThe Rationale section was reviewed by Odile.")
    words = {"rationale", "outcome", "signer", "option", "slot", "section"}

    def at(word: str, nth: int = 0, etype: EntityType = P, extractor: str = "spacy") -> Mention:
        start = -1
        for _ in range(nth + 1):
            start = text.index(word, start + 1)
        return Mention(start, start + len(word), word, etype, 0.8, extractor)

    found = [at("Rationale"), at("Outcome"), at("Signer"), at("Odile Brask"),
             at("Rationale", 1), at("Slot", etype=EntityType.ORGANIZATION, extractor="rule")]
    kept = {(m.text, m.start) for m in label_words(text, found, lambda w: w.lower() in words)}
    assert kept == {("Odile Brask", text.index("Odile Brask")), ("Rationale", text.index("Rationale", 5)),
                    ("Slot", text.index("Slot"))}


def test_the_capitalised_first_word_of_a_lowercase_row_key_is_dropped() -> None:
    from knotwork.ingestion.extraction.entity_filter import label_words

    text = "## Harbor office\n\nOffice head: Odile Brask\nPeople: ~20\nOffice moves are planned."
    words = {"office", "people"}
    head = Mention(text.index("Office head"), text.index("Office head") + 6, "Office", P, 0.8, "spacy")
    later = text.index("Office moves")
    prose = Mention(later, later + 6, "Office", P, 0.8, "spacy")
    name = Mention(text.index("Odile"), text.index("Odile") + 11, "Odile Brask", P, 0.9, "spacy")
    kept = label_words(text, [head, prose, name], lambda w: w.lower() in words)
    assert [(m.text, m.start) for m in kept] == [("Office", later), ("Odile Brask", name.start)]


def test_a_chunk_does_not_cluster_a_lone_word_with_a_person_guess_naming_an_effort() -> None:
    from knotwork.ingestion.extraction.extractor import _cluster

    text = "Brindle Migration is late. Brindle owns the ledger. Ottilie Wrenfield and Ottilie agreed."
    def at(word: str, nth: int = 0) -> Mention:
        start = -1
        for _ in range(nth + 1):
            start = text.index(word, start + 1)
        return Mention(start, start + len(word), word, P, 0.8, "spacy")

    entities, _ = _cluster([at("Brindle Migration"), at("Brindle", 1), at("Ottilie Wrenfield"),
                            at("Ottilie", 1)])
    names = {e.name: e.aliases for e in entities}
    assert set(names) == {"Brindle Migration", "Brindle", "Ottilie Wrenfield"}
    assert names["Ottilie Wrenfield"] == {"Ottilie"} and not names["Brindle Migration"]
