"""Ensemble voting (design doc 003): votes, discounts, type majority, spans, names, LLM slot."""

from __future__ import annotations

import pytest

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.ensemble import Ensemble, VotePolicy, vote
from knotwork.ingestion.extraction.extractor import EnsembleExtractor
from knotwork.ingestion.extraction.extractors import (
    LlmVoteExtractor,
    UserTableExtractor,
    locate_votes,
)
from knotwork.ingestion.extraction.types import (
    ChunkInput,
    KnownName,
    LlmChunkVotes,
    LlmEntityVote,
    LlmRelationVote,
    Mention,
)

P, O, PR, T = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.PRODUCT, EntityType.TECHNOLOGY


def mention(start: int, end: int, etype: EntityType, conf: float, extractor: str,
            subtype: str | None = None) -> Mention:
    return Mention(start, end, "x" * (end - start), etype, conf, extractor, subtype)


def test_two_agreeing_extractors_pass_with_a_combined_confidence() -> None:
    [kept] = vote([mention(0, 5, O, 0.6, "spacy"), mention(0, 5, O, 0.7, "gliner")])
    assert kept.votes == ("gliner", "spacy")
    assert kept.confidence == pytest.approx(1 - 0.4 * 0.3)


def test_a_lone_extractor_needs_more_than_point_nine_and_is_discounted() -> None:
    assert vote([mention(0, 5, O, 0.9, "spacy")]) == []
    [kept] = vote([mention(0, 5, T, 0.95, "gazetteer")])
    assert kept.confidence == pytest.approx(0.95 * 0.8)
    assert kept.votes == ("gazetteer",)


def test_one_extractor_counts_once_however_many_candidates_it_gives() -> None:
    assert vote([mention(0, 5, O, 0.6, "spacy"), mention(1, 5, O, 0.6, "spacy")]) == []


def test_policy_is_configurable() -> None:
    strict = VotePolicy(min_votes=3)
    assert vote([mention(0, 5, O, 0.6, "spacy"), mention(0, 5, O, 0.7, "gliner")], strict) == []


def test_the_type_is_the_weighted_majority_and_the_precise_span_wins() -> None:
    # spaCy calls "the Kafka" an ORG; the gazetteer says TECHNOLOGY on the exact word
    [kept] = vote([mention(0, 9, O, 0.65, "spacy"), mention(4, 9, T, 0.95, "gazetteer")])
    assert (kept.start, kept.end, kept.type) == (4, 9, T)


def test_subtype_follows_the_winning_type() -> None:
    [kept] = vote([mention(0, 13, P, 0.75, "spacy"), mention(0, 13, O, 0.92, "rule", "TEAM")])
    assert (kept.type, kept.subtype) == (O, "TEAM")


def test_a_first_name_the_model_called_a_company_is_a_person() -> None:
    text = "Priya"
    cands = [Mention(0, 5, text, O, 0.65, "spacy"), Mention(0, 5, text, EntityType.CONCEPT, 0.5, "shape")]
    [kept] = vote(cands)
    assert kept.type is P


class _Fixed:
    def __init__(self, name: str, found: list[Mention]) -> None:
        self.name = name
        self._found = found

    def mentions(self, chunks: list[ChunkInput]) -> list[list[Mention]]:
        return [list(self._found) for _ in chunks]


def test_ensemble_runs_any_extractor_behind_the_protocol() -> None:
    text = "Zorblax ships today."
    a = _Fixed("a", [Mention(0, 7, "Zorblax", PR, 0.6, "a")])
    b = _Fixed("b", [Mention(0, 7, "Zorblax", PR, 0.6, "b")])
    [[kept]] = Ensemble([a, b]).mentions([ChunkInput(text)])
    assert (kept.text, kept.votes) == ("Zorblax", ("a", "b"))
    assert Ensemble([a]).mentions([ChunkInput(text)]) == [[]]


# ---------------------------------------------------------------- whole extractor, no spaCy
@pytest.fixture
def extractor() -> EnsembleExtractor:
    return EnsembleExtractor(None)


def test_canonical_names_strip_titles_possessives_and_keep_aliases(extractor: EnsembleExtractor) -> None:
    text = "Dr. Sarah Lin's team owns the Ledger Service. Later Sarah said the LEDGER SERVICE is fine."
    [ex] = extractor.extract([text], {})
    by_key = {e.key: e for e in ex.entities}
    assert by_key["sarah lin"].name == "Sarah Lin"
    assert "Sarah" not in {e.name for e in ex.entities}  # the given name joined the full name
    assert by_key["ledger service"].type is PR


def test_slack_handles_map_through_the_user_table(extractor: EnsembleExtractor) -> None:
    extractor.users = {"U024BE7LH": "Marta Kowalski", "pk": "Paul Kessler"}
    [ex] = extractor.extract(["@pk and U024BE7LH reviewed the Ledger Service."], {})
    people = {e.name for e in ex.entities if e.type is P}
    assert people == {"Marta Kowalski", "Paul Kessler"}


def test_handles_map_to_known_people_without_a_table() -> None:
    known = {"marta kowalski": KnownName("Marta Kowalski", P, None)}
    [found] = UserTableExtractor().mentions([ChunkInput("ping @marta.kowalski please", known=known)])
    assert [(m.text, m.refers_to) for m in found] == [("@marta.kowalski", "Marta Kowalski")]
    [none] = UserTableExtractor().mentions([ChunkInput("ping @nobody please", known=known)])
    assert none == []


def test_llm_votes_are_located_in_the_text() -> None:
    votes = LlmChunkVotes(entities=[LlmEntityVote("Zorblax", PR, 0.8), LlmEntityVote("absent", O)])
    found = locate_votes("Zorblax v2 replaced zorblax v1.", votes)
    assert [(m.start, m.end, m.extractor) for m in found] == [(0, 7, "llm")]
    extractor = LlmVoteExtractor()
    extractor.set_votes([votes, None])
    assert [len(x) for x in extractor.mentions([ChunkInput("Zorblax"), ChunkInput("Zorblax")])] == [1, 0]


def test_llm_votes_and_relations_join_the_rule_extraction(extractor: EnsembleExtractor) -> None:
    text = "Zorblax and Quenta went live."
    votes = LlmChunkVotes(
        entities=[LlmEntityVote("Zorblax", PR, 0.8), LlmEntityVote("Quenta", O, 0.8)],
        relations=[LlmRelationVote("Quenta", "Zorblax", RelationType.OWNS, 0.7)])
    [without] = extractor.extract([text], {})
    # the sentence's first word is capitalised anyway: that alone never passes the vote (a
    # capitalised word inside the sentence, "Quenta", is a weak product vote of its own)
    assert "Zorblax" not in [e.name for e in without.entities]
    [ex] = extractor.extract([text], {}, llm=[votes])
    names = [e.name for e in ex.entities]
    assert sorted(names) == ["Quenta", "Zorblax"]
    [rel] = [r for r in ex.relations if r.type is RelationType.OWNS]
    assert (names[rel.source], names[rel.target], rel.method) == ("Quenta", "Zorblax", "llm")
    assert rel.fact == "Zorblax and Quenta went live."


# ---------------------------------------------------------------- page labels vs chat speakers
def test_one_word_page_labels_are_not_speakers() -> None:
    from knotwork.ingestion.extraction.speakers import speaker_turns

    page = "ADR-014\nDeciders: Chidi Okafor, Mei-Ling Tan\nPurpose: move the bus\nVP Data: Siddharth Iyer"
    assert speaker_turns(page) == []
    chat = "Kofi: on it\nDana Whitfield: thanks Kofi"
    assert [t.name for t in speaker_turns(chat)] == ["Kofi", "Dana Whitfield"]
    assert [t.name for t in speaker_turns("Zed (SRE): I'm on it")] == ["Zed"]
    assert [t.name for t in speaker_turns("Priya: I'm on it")] == ["Priya"]  # a known given name


def test_lower_case_team_word_after_a_determiner(extractor: EnsembleExtractor) -> None:
    [ex] = extractor.extract(["Rafael Duarte took over the Payments Core team on Monday."], {})
    teams = [e for e in ex.entities if e.subtype == "TEAM"]
    assert [(e.name, e.type) for e in teams] == [("Payments Core team", O)]
