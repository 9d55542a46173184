"""The synthetic world: determinism, loadability, and consistency of its ground truth."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest

from bench.world import build_world, generate_world
from knotwork.ingestion.loaders.detect import SourceKind, load_path


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("world")
    generate_world(out, people=60, seed=11)
    return out


@pytest.fixture(scope="module")
def loaded(world: Path) -> dict[str, str]:
    texts = {}
    for part, kind in (("confluence", SourceKind.CONFLUENCE), ("slack", SourceKind.SLACK)):
        result = load_path(world / part)
        assert result.kind is kind
        assert result.skipped == 0
        texts.update({d.source_id: f"{d.title}\n{d.content}" for d in result.documents})
    return texts


def test_same_seed_gives_the_same_bytes(tmp_path: Path, world: Path) -> None:
    generate_world(tmp_path / "again", people=60, seed=11)
    generate_world(tmp_path / "other", people=60, seed=12)
    first, again = _files(world), _files(tmp_path / "again")
    assert first == again
    assert _files(tmp_path / "other") != first


def test_loaders_parse_every_rendered_document(world: Path, loaded: dict[str, str]) -> None:
    truth_docs = {row["doc"] for row in _jsonl(world / "truth" / "documents.jsonl")}
    pages = [p for p in (world / "confluence").glob("*.json") if p.name != "users.json"]
    assert len(pages) == sum(1 for d in truth_docs if not d.count("/"))
    assert set(loaded) == truth_docs


def test_every_evidence_document_contains_the_surface_forms(
        world: Path, loaded: dict[str, str]) -> None:
    relations = _jsonl(world / "truth" / "relations.jsonl")
    checked = 0
    for rel in relations:
        for ev in rel["evidence"]:
            text = loaded[ev["doc"]].lower()
            assert ev["subject_form"].lower() in text, (rel, ev)
            assert ev["object_form"].lower() in text, (rel, ev)
            checked += 1
    assert checked > len(relations)  # most facts are stated, many more than once


def test_every_mention_form_is_in_its_document(world: Path, loaded: dict[str, str]) -> None:
    for row in _jsonl(world / "truth" / "mentions.jsonl"):
        text = loaded[row["doc"]].lower()
        for _entity, form in row["mentions"]:
            assert form.lower() in text, (row["doc"], form)


def test_entities_relations_and_questions_are_consistent(world: Path) -> None:
    entities = {e["id"]: e for e in _jsonl(world / "truth" / "entities.jsonl")}
    relations = _jsonl(world / "truth" / "relations.jsonl")
    stated = [r for r in relations if r["evidence"]]
    assert len(stated) / len(relations) > 0.8
    for rel in stated:
        assert rel["subject"] in entities and rel["object"] in entities
        if rel["valid_from"] and rel["valid_to"]:
            assert rel["valid_from"] <= rel["valid_to"]
    # people are written in several ways (full name, given name, nickname, typo)
    person_forms = [len(e["forms"]) for e in entities.values() if e["kind"] == "person"]
    assert sum(n > 1 for n in person_forms) > len(person_forms) / 2
    questions = _jsonl(world / "truth" / "questions.jsonl")
    cats = Counter(q["category"] for q in questions)
    assert set(cats) == {"local", "multi_hop", "temporal", "global", "aggregation",
                         "unanswerable"}
    docs = {row["doc"] for row in _jsonl(world / "truth" / "documents.jsonl")}
    for q in questions:
        if q["category"] == "unanswerable":
            assert not q["answers"] and not q["supporting_docs"]
            continue
        assert q["answers"] or q["items"]
        assert q["supporting_docs"] and set(q["supporting_docs"]) <= docs
        if q["category"] == "temporal":
            assert q["as_of"] and q["wrong_answers"]
            assert not set(q["answers"]) & set(q["wrong_answers"])


def test_confusable_people_are_distinct_and_paired(world: Path) -> None:
    pairs = _jsonl(world / "truth" / "resolution_pairs.jsonl")
    confusable = [p for p in pairs if p["kind"] == "confusable"]
    assert confusable and all(not p["same"] and p["a_entity"] != p["b_entity"]
                              for p in confusable)
    assert any(p["same"] for p in pairs)


def test_temporal_changes_close_and_open_relations() -> None:
    w = build_world(120, seed=3)
    assert {e.kind for e in w.events} >= {"lead_change", "transfer", "office_move",
                                          "vendor_swap"}
    for ev in w.events:
        for rid in ev.ended:
            assert w.relations[rid].end == ev.day
        for rid in ev.started:
            assert w.relations[rid].start == ev.day
    # a functional relation never holds twice on the same day (a person may lead several
    # projects at once, so project_lead is not functional per person)
    for (label, _subject), rids in w.timeline.items():
        if label == "project_lead":
            continue
        spans = [(w.relations[r].start, w.relations[r].end) for r in rids]
        for (_s1, e1), (s2, _e2) in itertools.pairwise(spans):
            assert e1 is not None and s2 is not None and e1 <= s2


def test_large_worlds_scale_linearly() -> None:
    w = build_world(5000, seed=1)
    assert len(w.of_kind("person")) == 5000
    names = [e.name for e in w.of_kind("person")]
    assert len(set(names)) == len(names)
    assert len(w.relations) > 5 * 5000
