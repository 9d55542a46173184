"""Design doc 001 as an acceptance test, through the public Python API (Knotwork)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import RelationType
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration, pytest.mark.models]

TURNS = [
    "Alice Chen(user): Hi, I'm Alice Chen. I work at TechCorp as a senior software engineer.",
    "Alice Chen(user): I'm currently leading Project Phoenix, a major cloud migration initiative.",
    "Alice Chen(user): The project deadline is February 15th, and we have 3 team members.",
]


@pytest.fixture(params=["postgres+edge", "sqlite+memory"])
def kw(request: pytest.FixtureRequest, make_settings: SettingsFactory) -> Iterator[Knotwork]:
    if request.param == "postgres+edge":
        url = request.getfixturevalue("postgres_url")
        settings = make_settings(database_url=url)
    else:
        settings = make_settings(vectors="memory")
    with Knotwork(settings) as instance:
        yield instance


def _add_turns(kw: Knotwork) -> list[list[str]]:
    episodes = []
    for minute, turn in enumerate(TURNS):
        result = kw.add_episode(turn, reference_time=datetime(2026, 2, 3, 12, minute, tzinfo=UTC),
                                source="message")
        episodes.append(result.episode_ids)
    return episodes


def test_three_turns_build_the_graph_of_the_design_trace(kw: Knotwork) -> None:
    episodes = _add_turns(kw)
    assert all(len(ids) == 1 for ids in episodes)
    export = kw.export_graph()
    names = sorted(e.name for e in export.entities)
    assert names.count("Alice Chen") == 1
    assert names.count("TechCorp") == 1
    assert names.count("Project Phoenix") == 1
    assert len(export.entities) == 3, names

    counts = kw.runtime.graph.counts(kw.settings.group)
    assert counts.episodes == 3
    assert counts.mentions == 6

    by_name = {e.name: e.id for e in export.entities}
    works = [f for f in export.facts if f.type == RelationType.WORKS_AT]
    assert [(f.source, f.target) for f in works] == [(by_name["Alice Chen"], by_name["TechCorp"])]
    assert works[0].episodes == episodes[0]
    leads = [f for f in export.facts
             if f.source == by_name["Alice Chen"] and f.target == by_name["Project Phoenix"]]
    assert leads and leads[0].type == RelationType.LEADS
    assert "Project Phoenix" in leads[0].fact


def test_deadline_question_cites_the_third_episode(kw: Knotwork) -> None:
    episodes = _add_turns(kw)
    result = kw.query("When is the Project Phoenix deadline?")
    assert "February 15th" in result.answer
    assert result.citations, result
    assert result.citations[0].chunk_id == episodes[2][0]
    assert result.confidence > 0.3
    assert "February 15th" in result.context


def test_a_fact_seen_again_gains_the_episode_instead_of_a_duplicate(kw: Knotwork) -> None:
    episodes = _add_turns(kw)
    again = kw.add_episode("Alice Chen(user): Just confirming that I work at TechCorp.",
                           reference_time=datetime(2026, 2, 4, tzinfo=UTC))
    works = [f for f in kw.export_graph().facts if f.type == RelationType.WORKS_AT]
    assert len(works) == 1
    assert works[0].episodes == [episodes[0][0], again.episode_ids[0]]


def test_adding_the_same_episodes_again_changes_nothing(kw: Knotwork) -> None:
    _add_turns(kw)
    before = kw.export_graph()
    counts = kw.runtime.graph.counts(kw.settings.group)
    repeated = _add_turns(kw)
    assert kw.export_graph() == before
    assert kw.runtime.graph.counts(kw.settings.group) == counts
    assert all(len(ids) == 1 for ids in repeated)


def test_a_newer_employer_invalidates_the_older_fact(kw: Knotwork) -> None:
    _add_turns(kw)
    kw.add_episode("Alice Chen(user): Big news: I now work at Globex.",
                   reference_time=datetime(2026, 6, 1, tzinfo=UTC))
    facts = {f.target_name: f for f in kw.export_graph().facts if f.type == RelationType.WORKS_AT}
    assert facts["TechCorp"].invalid_at == "2026-06-01T00:00:00Z"
    assert facts["Globex"].invalid_at is None
    then = kw.query("Where does Alice Chen work?", as_of=datetime(2026, 3, 1, tzinfo=UTC))
    assert "TechCorp" in then.answer
    now = kw.query("Where does Alice Chen work?")
    assert "Globex" in now.answer


def test_a_question_without_support_abstains(kw: Knotwork) -> None:
    _add_turns(kw)
    result = kw.query("What is the airspeed velocity of an unladen swallow?")
    assert result.confidence < 0.3
    assert result.citations == []
