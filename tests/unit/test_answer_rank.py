"""The learned answer choice among the best few candidates (small texts of our own)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bench.fit_answer_rank import Window, fit, report, states_gold
from knotwork.domain.models import Entity, EntityType, Fact
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.answer_rank import (
    FEATURES,
    MODEL,
    RankModel,
    answer_first,
    features,
    load_model,
    model_order,
    runner_up,
)


@dataclass
class U:
    text: str
    score: float
    context: str = ""
    display: str = ""
    parts: dict[str, float] = field(default_factory=dict)
    fact: Fact | None = None


def _entity(name: str, kind: EntityType) -> Entity:
    now = datetime(2024, 1, 1, tzinfo=UTC)
    return Entity(id=name.lower().replace(" ", "-"), group_id="g", name=name, canonical_name=name,
                  type=kind, name_keys=[normalize_name(name)], created_at=now, updated_at=now)


def _lookup(known: list[Entity]):
    def find(keys: list[str]) -> list[Entity]:
        return [e for e in known if any(k in e.name_keys for k in keys)]

    return find


def _col(name: str) -> int:
    return FEATURES.index(name)


def _only(name: str, weight: float = 1.0) -> RankModel:
    return RankModel((name,), (weight,), "test")


def test_one_row_per_candidate_with_every_feature() -> None:
    window = [U("The depot opened last week.", 0.9), U("The depot opened on 4 May 2021.", 0.8)]
    rows = features("On what date did the depot open?", window, [], ["depot", "open"], _lookup([]))
    assert len(rows) == 2 and all(len(r) == len(FEATURES) for r in rows)
    assert rows[0][_col("first")] == 1.0 and rows[1][_col("first")] == 0.0
    assert rows[1][_col("score")] == pytest.approx(0.8 / 0.9)


def test_a_written_out_date_is_explicit_and_a_relative_one_is_not() -> None:
    window = [U("The depot opened last week.", 0.9), U("The depot opened on 4 May 2021.", 0.8)]
    rows = features("On what date did the depot open?", window, [], [], _lookup([]))
    assert rows[0][_col("typed")] == 1.0 and rows[0][_col("explicit")] == 0.0
    assert rows[1][_col("typed")] == 1.0 and rows[1][_col("explicit")] == 1.0


def test_a_company_the_question_names_is_no_answer_of_the_company_type() -> None:
    old, new = _entity("Birchwell Ltd", EntityType.ORGANIZATION), _entity("Quarry Nine", EntityType.ORGANIZATION)
    window = [U("Birchwell Ltd supplied the parts for years.", 0.9),
              U("Quarry Nine took over from Birchwell Ltd in June.", 0.8)]
    rows = features("Which company replaced Birchwell Ltd as supplier?", window, [old], [],
                    _lookup([old, new]))
    assert rows[0][_col("typed")] == 0.0 and rows[1][_col("typed")] == 1.0


def test_focus_anchor_and_novel_shares() -> None:
    anchor = _entity("Harbor Team", EntityType.ORGANIZATION)
    window = [U("Harbor Team moved its standup.", 0.9),
              U("The Harbor Team budget grew by a third.", 0.8, context="Budget review")]
    rows = features("How did the Harbor Team budget change?", window, [anchor], ["budget", "chang"],
                    _lookup([anchor]))
    assert rows[0][_col("focus")] == 0.0 and rows[1][_col("focus")] == 0.5
    assert rows[0][_col("anchor")] == 1.0 and rows[1][_col("anchor")] == 1.0
    assert rows[1][_col("novel")] < rows[0][_col("novel")]  # what it adds to the question


def test_the_model_moves_the_candidate_it_scores_highest() -> None:
    window = [U("The depot opened last week.", 0.9), U("The depot opened on 4 May 2021.", 0.8)]
    q = "On what date did the depot open?"
    assert answer_first(q, window, [], [], _lookup([]), model=_only("explicit")) == 1
    assert answer_first(q, window, [], [], _lookup([]), model=_only("first")) is None
    assert answer_first(q, window, [], [], _lookup([]), model=None) is None
    assert answer_first(q, window[:1], [], [], _lookup([]), model=_only("explicit")) is None


def test_only_the_window_may_answer() -> None:
    window = [U("Nothing here.", 0.9)] * 3 + [U("The depot opened on 4 May 2021.", 0.8)]
    q = "On what date did the depot open?"
    assert answer_first(q, window, [], [], _lookup([]), model=_only("explicit"), window=3) is None
    assert answer_first(q, window, [], [], _lookup([]), model=_only("explicit"), window=4) == 3


def test_the_shipped_model_loads_and_knows_its_features(tmp_path: Path) -> None:
    assert MODEL is not None and set(MODEL.features) <= set(FEATURES)
    assert "fitted on" in MODEL.fitted_on
    assert load_model(tmp_path / "none.json") is None
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"features": ["shoe size"], "weights": [1.0], "fitted_on": "x"}))
    with pytest.raises(ValueError):
        load_model(bad)


def test_the_fit_learns_which_feature_marks_the_right_candidate() -> None:
    k = len(FEATURES)

    def row(first: float, explicit: float) -> tuple[float, ...]:
        r = [0.0] * k
        r[_col("first")], r[_col("explicit")] = first, explicit
        return tuple(r)

    windows = [Window(f"q{i}", [row(1, 0), row(0, 1)], [0, 1]) for i in range(6)]
    windows += [Window(f"p{i}", [row(1, 1), row(0, 0)], [1, 0]) for i in range(6)]
    windows.append(Window("none", [row(1, 0), row(0, 0)], [0, 0]))  # teaches nothing
    weights = fit(windows, l2=0.01, iters=500)
    assert weights[_col("explicit")] > 0
    assert "12 windows with a right candidate (of 13)" in report(windows, weights)
    assert "model's choice right 12 (right→wrong 0)" in report(windows, weights)
    assert "model's choice right 6" in report(windows, np.zeros(k))


def test_gold_is_matched_like_the_evaluation() -> None:
    q = {"answer": "Quarry Nine (since June)", "answer_aliases": ["Q9"]}
    assert states_gold(q, "It was Quarry Nine.") and states_gold(q, "q9 took over")
    assert not states_gold(q, "Birchwell Ltd")
    assert states_gold({"answer": "x", "must_include": ["june|jun", "quarry"]}, "Quarry, Jun 3")


def test_the_model_orders_the_window_with_probabilities() -> None:
    window = [U("The depot opened last week.", 0.9), U("The depot opened on 4 May 2021.", 0.8),
              U("Nothing here.", 0.7)]
    q = "On what date did the depot open?"
    ordered = model_order(q, window, [], [], _lookup([]), model=_only("explicit", 2.0))
    assert [i for i, _ in ordered] == [1, 0, 2]  # a tie keeps the ranking's order
    assert sum(p for _, p in ordered) == pytest.approx(1.0)
    assert ordered[0][1] > ordered[1][1] == pytest.approx(ordered[2][1])
    assert model_order(q, window, [], [], _lookup([]), model=None) == []
    assert model_order(q, window[:1], [], [], _lookup([]), model=_only("explicit")) == []


def test_the_second_choice_shows_only_when_nearly_as_likely() -> None:
    assert runner_up([(2, 0.5), (0, 0.4), (1, 0.1)], 0.3) == 0
    assert runner_up([(2, 0.8), (0, 0.15), (1, 0.05)], 0.3) is None
    assert runner_up([(2, 0.5), (0, 0.4)], 1.5) is None  # switched off
    assert runner_up([(0, 1.0)], 0.0) is None
