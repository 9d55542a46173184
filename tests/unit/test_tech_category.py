"""Questions asking for a kind of technology ("What database does X use?") need evidence naming
one of that kind next to X; otherwise they are left unanswered."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Entity, EntityType
from knotwork.retrieval.tech_category import (
    asked_category,
    category_first,
    names_of_kind,
    unsupported_category,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def entity(name: str, aliases: tuple[str, ...] = ()) -> dict[str, Entity]:
    e = Entity(id=name.lower(), group_id="g", name=name, canonical_name=name.lower(),
               type=EntityType.PRODUCT, aliases=list(aliases), created_at=T0, updated_at=T0)
    return {e.id: e}


@pytest.mark.parametrize(
    ("question", "kind"),
    [("What database does Project Kelp use?", "database"),
     ("Which message broker does the Orders API use?", "message broker"),
     ("What programming language is Kelp written in?", "programming language"),
     ("Which cloud provider is Kelp hosted on?", "cloud provider"),
     ("What kind of queue does Kelp publish to?", "queue"),
     ("What frameworks does the Kelp frontend use?", "framework"),
     ("Who owns Kelp?", None), ("What does Kelp use?", None),
     ("What database incidents happened last week?", None)],
)
def test_the_asked_kind(question: str, kind: str | None) -> None:
    assert asked_category(question) == kind


def test_technologies_of_a_kind_in_text() -> None:
    assert names_of_kind("database", "Kelp keeps its state in postgres and Redis.") == ["postgres", "Redis"]
    assert names_of_kind("language", "Kelp is written in Go.") == ["Go"]
    assert names_of_kind("language", "We go live in May with React.") == []
    assert names_of_kind("database", "Kelp is written in Go and uses React.") == []


def test_no_sentence_naming_a_database_next_to_the_entity_is_no_answer() -> None:
    kelp = entity("Project Kelp", ("Kelp",))
    texts = ["Project Kelp uses React and TypeScript.", "The Ledger stores journals in PostgreSQL."]
    why = unsupported_category("What database does Project Kelp use?", kelp, texts)
    assert why is not None and "database" in why
    # an unrelated kind of question, or a text that states it, is answered
    assert unsupported_category("What does Project Kelp use?", kelp, texts) is None
    stated = [*texts, "Kelp keeps its orders in MongoDB."]
    assert unsupported_category("What database does Project Kelp use?", kelp, stated) is None


def test_the_sentence_that_names_the_kind_goes_first() -> None:
    kelp = entity("Kelp")
    texts = ["Kelp uses React for its dashboard.", "Kelp is written in Go and stores data in MySQL."]
    assert category_first("What database does Kelp use?", kelp, texts) == 1
    assert category_first("What language is Kelp written in?", kelp, texts) == 1
    assert category_first("Which framework does Kelp use?", kelp, texts) == 0
