"""RESOLVE_ENTITY tasks from a batch's deferred (tied) resolution decisions."""

from __future__ import annotations

from datetime import UTC, datetime

from knotwork.domain.models import EntityType
from knotwork.domain.tasks import Priority, ResolveEntityTask, decode_task, encode_task
from knotwork.resolution.models import ReviewItem
from knotwork.services.worker.resolve import deferred_tasks

NOW = datetime(2024, 3, 1, tzinfo=UTC)


def _review(entity_id: str | None, mention: str, episodes: list[str],
            entity_type: str = "PERSON") -> ReviewItem:
    return ReviewItem(id=f"r-{mention}-{entity_id}", group_id="g", mention=mention,
                      entity_type=entity_type, entity_id=entity_id, decision="new", score=0.8,
                      episode_ids=episodes, created_at=NOW)


def test_one_high_priority_task_per_deferred_entity() -> None:
    tasks = deferred_tasks("g", [_review("e1", "A. Chen", ["ep1"]),
                                 _review("e1", "A. Chen", ["ep2"]),  # same entity again
                                 _review(None, "Nobody", ["ep3"]),
                                 _review("e2", "Atlas", [], entity_type="not-a-type")])
    assert [t.entity.entity_id for t in tasks] == ["e1", "e2"]
    first, second = tasks
    assert first.priority is Priority.HIGH and first.group_id == "g"
    assert first.entity.display_name == "A. Chen" and first.entity.entity_type is EntityType.PERSON
    assert first.entity.source_chunk_id == "ep1" and first.blocking_keys
    assert second.entity.entity_type is None and second.entity.source_chunk_id is None


def test_the_task_round_trips_in_the_design_format() -> None:
    [task] = deferred_tasks("g", [_review("e1", "A. Chen", ["ep1"])])
    body = encode_task(task)
    assert '"task_type":"RESOLVE_ENTITY"' in body and '"blocking_keys"' in body
    again = decode_task("RESOLVE_ENTITY", body)
    assert isinstance(again, ResolveEntityTask) and again == task
