"""Split, move and undo on the embedded stack: facts follow their evidence, a split is kept by
resolution (cannot-link) through re-ingest, consolidation and re-resolution, and any sequence of
review actions undone newest first leaves the graph, vectors and SQL as they were."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork
from knotwork.domain.ids import stable_id
from knotwork.domain.models import EntityType
from knotwork.domain.ports import Collection
from knotwork.domain.timeutil import utcnow
from knotwork.resolution.merge import MergeError
from knotwork.resolution.models import ReviewItem, ReviewStatus
from knotwork.resolution.reresolve import reresolve
from knotwork.resolution.service import resolution_sql
from knotwork.resolution.workflow import EntityWorkflow, SplitRequest
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration]

TEXTS = [
    "Ondrej Vasko leads the Harbor Team. Ondrej Vasko reports to Lenka Hruba.",
    "Ondrej Vasko maintains the Ledger Service.",
    "Marta Vasko owns the Pricing Engine. Marta Vasko works at Bluefin Labs.",
    "Lenka Hruba works at Bluefin Labs.",
    "Ondrej Vasko approved the Harbor budget.",
]


@pytest.fixture(params=["sqlite", "postgres"])
def kw(request: pytest.FixtureRequest, make_settings: SettingsFactory) -> Iterator[Knotwork]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    with Knotwork(make_settings(database_url=url, vectors="memory", embedder="hashing")) as k:
        for i, text in enumerate(TEXTS):
            k.add_episode(text, reference_time=datetime(2026, 1, 1 + i, tzinfo=UTC), source="text")
        yield k


def _id(kw: Knotwork, name: str) -> str:
    found = [e for e in kw.runtime.graph.list_entities(kw.settings.group) if e.name == name]
    assert found, sorted(e.name for e in kw.runtime.graph.list_entities(kw.settings.group))
    return found[0].id


def _wf(kw: Knotwork) -> EntityWorkflow:
    return EntityWorkflow(kw.runtime, kw.settings.group)


def _state(kw: Knotwork) -> tuple[object, ...]:
    """Graph (entities but their version, facts, MENTIONS), vectors and SQL (mention rows,
    blocking keys, review statuses, cannot-links)."""
    g, group = kw.runtime.graph, kw.settings.group
    entities = sorted((e.model_dump(mode="json", exclude={"version"})
                       for e in g.list_entities(group)), key=lambda e: str(e["id"]))
    facts = sorted((f.model_dump(mode="json") for f in g.list_facts(group)),
                   key=lambda f: str(f["id"]))
    mentions = sorted((ep, str(e["id"])) for e in entities
                      for ep in g.entity_episode_ids(group, str(e["id"])))
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    rows = sorted((str(e["id"]), tuple(sql.mention_ids(group, str(e["id"])))) for e in entities)
    keys = sorted(sql.lookup_keys(group, [k for e in entities for k in e["name_keys"]], 100)
                  .items())
    reviews = sorted((r.id, r.status.value) for r in sql.list_reviews(group, None, "", 1000))
    wf = _wf(kw)
    cannot = sorted(wf.actions_sql.cannot_links(group))
    vectors = sorted(
        (c.value, p.id, tuple(round(x, 5) for x in p.vector), tuple(sorted(p.payload.items())))
        for c in (Collection.ENTITIES, Collection.FACTS)
        for p in kw.runtime.vectors.scan(c, group))
    return entities, facts, mentions, rows, keys, reviews, cannot, vectors


def test_split_by_surface_form_moves_mentions_facts_and_is_kept_by_resolution(kw: Knotwork) -> None:
    group, wf = kw.settings.group, _wf(kw)
    ondrej, marta = _id(kw, "Ondrej Vasko"), _id(kw, "Marta Vasko")
    # a wrong merge as resolution might make it: Marta's mentions end up on Ondrej
    wf.merge(ondrej, [marta], actor="test")
    before_facts = {f.fact for f in kw.runtime.graph.list_facts(group) if ondrej in
                    (f.source_id, f.target_id)}
    assert any("Pricing Engine" in f for f in before_facts)

    action = wf.split(ondrej, SplitRequest(surface_forms=["marta vasko"]), actor="admin:test")

    new_id = action.entity_ids[1]
    graph = kw.runtime.graph
    [new] = graph.get_entities(group, [new_id])
    [old] = graph.get_entities(group, [ondrej])
    assert new.name == "Marta Vasko" and new.type is EntityType.PERSON
    assert "Marta Vasko" not in old.aliases
    facts = graph.list_facts(group)
    mine = {f.fact for f in facts if new_id in (f.source_id, f.target_id)}
    theirs = {f.fact for f in facts if ondrej in (f.source_id, f.target_id)}
    assert any("Pricing Engine" in f for f in mine) and any("Bluefin" in f for f in mine)
    assert all("Marta" not in f for f in theirs) and any("Ledger" in f for f in theirs)
    assert "Pricing Engine" in new.summary and "Pricing Engine" not in old.summary
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    assert sql.mention_ids(group, new_id) and all(
        "Marta" in t for t in sql.mention_texts(sql.mention_ids(group, new_id)).values())
    assert ("marta vasko" in {k for _, k in wf.actions_sql.cannot_links(group, [ondrej])})
    assert any(a.action == "entity.split" for a in wf.audit_trail(new_id))

    # resolution keeps them apart: resolve, re-ingest, consolidation + re-resolution
    assert wf.resolve("Marta Vasko", EntityType.PERSON).entity_id == new_id
    kw.add_episode("Marta Vasko presented the Pricing Engine roadmap.",
                   reference_time=datetime(2026, 2, 1, tzinfo=UTC), source="text")
    assert graph.get_entities(group, [ondrej, new_id]).__len__() == 2
    reresolve(kw.runtime, group)
    assert len(graph.get_entities(group, [ondrej, new_id])) == 2
    assert all("Marta" not in f.fact for f in graph.list_facts(group)
               if ondrej in (f.source_id, f.target_id))


def test_a_fact_with_evidence_on_both_sides_is_split_in_two(kw: Knotwork) -> None:
    group, wf = kw.settings.group, _wf(kw)
    ondrej = _id(kw, "Ondrej Vasko")
    lenka = _id(kw, "Lenka Hruba")
    # the same statement about a second person, wrongly attached to the same entity
    kw.add_episode("Ondrej Vasko reports to Lenka Hruba.",
                   reference_time=datetime(2026, 3, 1, tzinfo=UTC), source="text")
    graph = kw.runtime.graph
    [reports] = [f for f in graph.list_facts(group) if f.source_id == ondrej and f.target_id == lenka]
    assert len(reports.episodes) == 2
    rows = wf.mentions(ondrej)
    last = [r.id for r in rows if r.chunk_id == reports.episodes[-1]]
    action = wf.split(ondrej, SplitRequest(mention_ids=last, name="Ondrej Vasko Jr"),
                      actor="admin:test")
    new_id = action.entity_ids[1]
    facts = {(f.source_id, f.target_id): f for f in graph.list_facts(group)}
    assert facts[(ondrej, lenka)].episodes == reports.episodes[:1]
    assert facts[(new_id, lenka)].episodes == reports.episodes[1:]
    assert facts[(new_id, lenka)].id != reports.id and facts[(ondrej, lenka)].id == reports.id


def test_merge_into_moves_the_fact_and_the_query_follows(kw: Knotwork) -> None:
    group, wf = kw.settings.group, _wf(kw)
    ondrej, marta = _id(kw, "Ondrej Vasko"), _id(kw, "Marta Vasko")
    wf.merge(ondrej, [marta], actor="test")
    chunk = next(r.chunk_id for r in wf.mentions(ondrej) if r.text == "Marta Vasko")
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    lenka = _id(kw, "Lenka Hruba")
    item = ReviewItem(id=stable_id(group, "review", "t"), group_id=group, mention="Marta Vasko",
                      entity_type="PERSON", entity_id=ondrej, decision="merge_flagged", score=0.9,
                      episode_ids=[chunk], created_at=utcnow())
    sql.add_reviews([item])
    wf.merge_into(item.id, lenka, actor="admin:test")
    facts = kw.runtime.graph.list_facts(group)
    assert any("Pricing Engine" in f.fact and lenka in (f.source_id, f.target_id) for f in facts)
    assert not any("Pricing Engine" in f.fact and ondrej in (f.source_id, f.target_id)
                   for f in facts)
    assert any(a.action == "entity.merge_into" for a in wf.audit_trail(lenka))


def test_undo_refuses_out_of_order_and_twice(kw: Knotwork) -> None:
    wf = _wf(kw)
    ondrej = _id(kw, "Ondrej Vasko")
    first = wf.split(ondrej, SplitRequest(document_ids=[wf.mentions(ondrej)[0].document_id]),
                     actor="a")
    second = wf.split(ondrej, SplitRequest(mention_ids=[wf.mentions(ondrej)[0].id]), actor="a")
    with pytest.raises(MergeError, match="later action"):
        wf.undo(first.id, "a")
    wf.undo(second.id, "a")
    wf.undo(first.id, "a")
    with pytest.raises(MergeError, match="already undone"):
        wf.undo(first.id, "a")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_sequence_of_actions_undone_newest_first_restores_everything(
        kw: Knotwork, seed: int) -> None:
    group, wf = kw.settings.group, _wf(kw)
    sql = resolution_sql(kw.runtime)
    assert sql is not None
    rng = random.Random(seed)
    # review items as resolution files them: one per person mention
    items = []
    for entity in kw.runtime.graph.list_entities(group):
        for row in wf.mentions(entity.id)[:1]:
            items.append(ReviewItem(
                id=stable_id(group, "review", row.id), group_id=group, mention=row.text,
                entity_type=entity.type.value, entity_id=entity.id, decision="merge_flagged",
                score=0.8, episode_ids=[row.chunk_id], created_at=utcnow()))
    sql.add_reviews(items)
    before = _state(kw)
    done: list[str] = []
    for _ in range(8):
        op = rng.choice(["approve", "reject", "merge_into", "split", "undo"])
        pending = [i for i in sql.list_reviews(group, ReviewStatus.PENDING, "", 100)]
        entities = kw.runtime.graph.list_entities(group)
        try:
            if op == "undo" and done:
                wf.undo(done.pop(), "t")
            elif op == "split":
                e = rng.choice(entities)
                rows = wf.mentions(e.id)
                if len(rows) > 1:
                    done.append(wf.split(e.id, SplitRequest(mention_ids=[rows[-1].id]), "t").id)
            elif op in {"approve", "reject", "merge_into"} and pending:
                item = rng.choice(pending)
                if op == "approve":
                    wf.approve(item.id, "t")
                elif op == "reject":
                    wf.reject(item.id, "t")
                else:
                    wf.merge_into(item.id, rng.choice(entities).id, "t")
                done.append(wf.actions(1)[0].id)
        except MergeError:
            continue
    assert len(done) >= 2, "the sequence should have done something to undo"
    for action_id in reversed(done):
        wf.undo(action_id, "t")
    assert _state(kw) == before


def test_a_split_keeps_communities_fresh(kw: Knotwork) -> None:
    group, wf = kw.settings.group, _wf(kw)
    ondrej, marta = _id(kw, "Ondrej Vasko"), _id(kw, "Marta Vasko")
    wf.merge(ondrej, [marta], actor="test")
    kw.build_communities(group)
    graph = kw.runtime.graph
    [leaf] = graph.community_of(group, [ondrej], 0).values()
    assert not graph.get_community(group, leaf).summary_stale  # type: ignore[union-attr]

    action = wf.split(ondrej, SplitRequest(surface_forms=["Marta Vasko"]), actor="t")

    new_id = action.entity_ids[1]
    assert new_id in graph.community_of(group, [new_id], 0)  # the new entity has a community
    now = graph.get_community(group, graph.community_of(group, [ondrej], 0)[ondrej])
    assert now is not None and now.last_summarized_at is not None
    # marked stale for the next refresh, or (a small graph past the threshold) rebuilt
    assert now.summary_stale or now.last_summarized_at >= action.created_at.replace(microsecond=0)
