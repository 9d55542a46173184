"""Count/list questions, the question's own time as as_of, and wrong-surname abstention,
through ``Knotwork.query`` on the embedded stack (SQLite, qdrant-edge, FalkorDB, real spaCy
and MiniLM): episodes are extracted for real, nothing is hand-inserted into the graph."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork

pytestmark = [pytest.mark.integration, pytest.mark.models]

EPISODES = [
    (datetime(2023, 1, 10, tzinfo=UTC),
     ("Ana Silva is a member of the Orion Team. Bo Chen is a member of the Orion Team. "
     "Carla Diaz is a member of the Orion Team.")),
    (datetime(2023, 1, 12, tzinfo=UTC),
     ("The Orion Team sits in the Atlas Division. The Vega Team sits in the Atlas Division. "
     "The Lyra Team sits in the Borealis Division.")),
    (datetime(2023, 9, 1, tzinfo=UTC), "Bo Chen is a member of the Vega Team."),
]


@pytest.fixture
def kw(make_settings) -> Iterator[Knotwork]:  # type: ignore[no-untyped-def]
    settings = make_settings()
    with Knotwork(settings) as instance:
        for when, text in EPISODES:
            instance.add_episode(text, reference_time=when)
        try:
            yield instance
        finally:
            instance.runtime.graph.delete_group(settings.group)


def test_count_list_time_and_surname(kw: Knotwork) -> None:
    teams = kw.query("How many teams are in the Atlas Division?")
    assert teams.answer.startswith("2 teams"), teams.answer
    assert "Orion Team" in teams.answer and "Vega Team" in teams.answer
    assert "Lyra Team" not in teams.answer
    assert teams.citations and all(c.text for c in teams.citations)
    assert any(line.startswith("aggregation:") for line in teams.reasoning_trace)

    listed = kw.query("Which teams are in the Atlas Division?", mode="local")
    assert "Orion Team" in listed.answer and "Vega Team" in listed.answer

    # Bo Chen moved to the Vega Team in September 2023: today two people, in May 2023 three
    now = kw.query("How many people are on the Orion Team?")
    assert now.answer.startswith("2 people"), now.answer
    assert "Bo Chen" not in now.answer
    then = kw.query("How many people were on the Orion Team in May 2023?")
    assert then.answer.startswith("3 people"), then.answer
    assert any(line.startswith("as_of 2023-05-16") for line in then.reasoning_trace), \
        then.reasoning_trace

    # an explicit as_of wins over the question's words
    explicit = kw.query("How many people were on the Orion Team in May 2023?",
                        as_of=datetime(2023, 10, 1, tzinfo=UTC))
    assert explicit.answer.startswith("2 people"), explicit.answer

    # a known given name with an unknown surname is someone unknown
    unknown = kw.query("Who does Ana Kato report to?")
    assert unknown.confidence < 0.3 and not unknown.citations
    assert "Ana Kato" in unknown.answer
