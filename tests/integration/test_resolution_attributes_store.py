"""Attribute comparisons on the real stores: a profile (settings ``resolution_profile``) makes
``create`` file attribute blocking keys in SQL, find a record whose name the name keys miss,
merge on agreeing attributes, keep namesakes with conflicting ones apart, and keep every
value as a property with its provenance."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import EntityType
from knotwork.resolution.attributes import AttributeComparison, AttributeLevel, AttributeModel
from knotwork.resolution.blocking import BlockingRule
from knotwork.resolution.profile import ResolutionProfile
from knotwork.resolution.service import resolution_sql
from knotwork.resolution.workflow import EntityWorkflow
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration]

PROFILE = ResolutionProfile(
    rules=(BlockingRule(family="attribute", attributes=("date_of_birth",)),),
    attributes=AttributeModel(comparisons=(
        AttributeComparison(attribute="date_of_birth", method="damerau_levenshtein",
                            exact_weight=10.0, conflict_weight=-5.0,
                            levels=(AttributeLevel(label="one edit", min_similarity=0.87,
                                                   weight=5.0),)),
        AttributeComparison(attribute="postcode", exact_weight=8.0, conflict_weight=-4.0))))


@pytest.fixture
def kw(make_settings: SettingsFactory, tmp_path: Path) -> Iterator[Knotwork]:
    path = tmp_path / "profile.json"
    path.write_text(PROFILE.model_dump_json(indent=2), encoding="utf-8")
    settings = make_settings(vectors="memory", embedder="hashing", resolution_profile=path)
    with Knotwork(settings) as k:
        k.runtime.graph.ensure_schema(settings.group)
        yield k


def test_attributes_resolve_through_the_stored_index(kw: Knotwork) -> None:
    group = kw.settings.group
    flow = EntityWorkflow(kw.runtime, group)
    first = flow.create("Katherine Wojcik", EntityType.PERSON,
                        {"date_of_birth": "19560409", "postcode": "2600"}, actor="crm")
    assert first.created
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    assert sql.lookup_keys(group, ["a:date_of_birth=19560409"], 10)  # filed in SQL

    # a mangled name no name key links, with agreeing attributes: the same person
    again = flow.create("Kathy Vojczik", EntityType.PERSON,
                        {"date_of_birth": "19560409", "postcode": "2600"}, actor="hr")
    assert not again.created and again.entity_id == first.entity_id
    # a namesake with conflicting attributes: a new person
    namesake = flow.create("Katherine Wojcik", EntityType.PERSON,
                           {"date_of_birth": "19831127", "postcode": "2913"}, actor="crm")
    assert namesake.created and namesake.entity_id != first.entity_id

    [entity] = kw.runtime.graph.get_entities(group, [first.entity_id])
    assert "Kathy Vojczik" in entity.aliases
    assert [(v.value, v.source) for v in entity.properties["date_of_birth"]] == [
        ("19560409", "api:crm")]  # the same value once, with where it came from
    [other] = kw.runtime.graph.get_entities(group, [namesake.entity_id])
    assert other.properties["postcode"][0].value == "2913"
