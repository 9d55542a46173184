"""bench.quality end to end on a tiny world (real embedded stores; hashing embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from bench.quality import evaluate, main
from bench.world import generate_world

pytestmark = [pytest.mark.integration, pytest.mark.models]


def test_tiny_world_is_ingested_and_scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    monkeypatch.setenv("KNOTWORK_EMBEDDER", "hashing")
    world = tmp_path / "world"
    generate_world(world, people=12, seed=5, questions_per_category=2)
    report = evaluate(world, tmp_path / "store", Console(quiet=True), baseline=True)
    graph = report["graph"]
    assert isinstance(graph, dict)
    # every gold entity is written by full name at least once: most must be found
    assert graph["entity_recall"] > 0.7
    assert 0 < graph["entity_precision"] <= 1
    assert graph["relation_recall_untyped"] >= graph["relation_recall_typed"] > 0
    assert graph["resolution_mentions"] > 0 and graph["resolution_f1"] > 0.5
    communities = report["communities"]
    assert communities["community_people"] > 0
    precision = communities["community_team_precision"]  # None: no two people share one
    assert precision is None or 0 <= precision <= 1
    kw, base = report["knotwork"], report["baseline"]
    assert set(kw) == set(base) and "unanswerable" in kw
    asked = sum(row["n"] for row in kw.values())
    assert asked == report["questions"] > 6
    for row in list(kw.values()) + list(base.values()):
        assert 0 <= row["answered"] <= 1
    assert set(report["baseline_ratio"]) == set(kw) | {"all"}
    # recordlinkage on the same resolution pairs and the same mentions as Knotwork's figures
    res = report["resolution_baseline"]
    assert res["mentions"] == graph["resolution_mentions"] > 0
    assert res["pairs"] == graph["resolution_pairs"] > 0
    assert res["knotwork"]["resolution_f1"] == graph["resolution_f1"]
    assert 0 < res["recordlinkage"]["resolution_f1"] <= 1
    assert set(res["ratio"]) <= set(res["knotwork"])
    # graspologic's hierarchical Leiden on the graph Knotwork's communities come from
    com = report["community_baseline"]
    assert com["nodes"] > 0 and com["knotwork"]["leaves"] > 0
    assert -0.5 <= com["knotwork"]["modularity"] <= 1
    if com["graspologic"] is not None:  # the bench extra is installed
        assert com["graspologic"]["leaves"] > 0 and com["ratio"]["leaves"] is not None


def test_main_writes_the_json_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOTWORK_EMBEDDER", "hashing")
    world = tmp_path / "world"
    generate_world(world, people=12, seed=6, questions_per_category=1)
    out = tmp_path / "report.json"
    assert main([str(world), "--out", str(out), "--no-baseline", "--no-record"]) == 0
    report = json.loads(out.read_text())
    assert report["questions"] == sum(row["n"] for row in report["knotwork"].values())
    assert "baseline" not in report
    assert main([str(tmp_path), "--no-record"]) == 2  # not a world
