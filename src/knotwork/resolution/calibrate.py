"""Fit resolution thresholds from labelled mention pairs and report precision / recall.

A labelled pair is (mention, entity name, type, same?). Each pair is resolved through the full
resolver (blocking included) against a store holding the entity, so blocking misses count as
misses. ``calibrate`` picks the match threshold with the best F1 among those reaching the
wanted precision, the auto-merge threshold as the lowest score above which every labelled pair
was a true match, and keeps the ambiguity gap of the current settings.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from knotwork.domain.models import EntityType
from knotwork.resolution.resolver import MemoryCandidates, Resolver
from knotwork.resolution.scoring import CandidateRecord, MentionQuery, ResolutionConfig


@dataclass(frozen=True, slots=True)
class LabelledPair:
    mention: str
    entity: str
    type: EntityType
    same: bool
    category: str = ""


def load_pairs(path: Path) -> list[LabelledPair]:
    """CSV with header ``mention,entity,type,same,category`` (same: 1/0)."""
    pairs: list[LabelledPair] = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {"mention", "entity", "type", "same"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        for line, row in enumerate(reader, start=2):
            try:
                etype = EntityType(row["type"].strip().upper())
            except ValueError:
                raise ValueError(f"{path}:{line}: unknown entity type {row['type']!r}") from None
            if row["same"].strip() not in {"0", "1"}:
                raise ValueError(f"{path}:{line}: 'same' must be 0 or 1")
            pairs.append(LabelledPair(row["mention"], row["entity"], etype,
                                      row["same"].strip() == "1", row.get("category") or ""))
    if not pairs:
        raise ValueError(f"{path}: no labelled pairs")
    return pairs


@dataclass(frozen=True, slots=True)
class PairOutcome:
    pair: LabelledPair
    score: float  # best score of the pair's entity (0 when blocking did not find it)
    merged: bool  # the resolver attached the mention to the entity


class Metrics(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pairs: int
    true_positive: int
    false_positive: int
    false_negative: int
    precision: float
    recall: float
    f1: float
    confusable_merges: int = 0


def metrics(tp: int, fp: int, fn: int, pairs: int = 0, confusable: int = 0) -> Metrics:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return Metrics(pairs=pairs, true_positive=tp, false_positive=fp, false_negative=fn,
                   precision=round(p, 4), recall=round(r, 4), f1=round(f1, 4),
                   confusable_merges=confusable)


def resolve_pairs(resolver: Resolver, pairs: Sequence[LabelledPair]) -> list[PairOutcome]:
    out: list[PairOutcome] = []
    for i, pair in enumerate(pairs):
        store = MemoryCandidates(resolver.rules)
        store.add(CandidateRecord(id=f"e{i}", name=pair.entity, type=pair.type))
        decision = resolver.resolve(MentionQuery(pair.mention, pair.type), [store])
        score = next((s.score for s in decision.scored if s.entity_id == f"e{i}"), 0.0)
        out.append(PairOutcome(pair, score, decision.entity_id == f"e{i}"))
    return out


def evaluate(outcomes: Sequence[PairOutcome]) -> Metrics:
    tp = sum(o.merged and o.pair.same for o in outcomes)
    fp = sum(o.merged and not o.pair.same for o in outcomes)
    fn = sum(not o.merged and o.pair.same for o in outcomes)
    confusable = sum(o.merged and not o.pair.same and o.pair.category == "confusable"
                     for o in outcomes)
    return metrics(tp, fp, fn, len(outcomes), confusable)


class Calibration(BaseModel):
    model_config = ConfigDict(extra="forbid")
    match_threshold: float
    auto_threshold: float
    ambiguity_threshold: float
    at_operating_point: Metrics
    curve: list[tuple[float, float, float]]  # (threshold, precision, recall)


def calibrate(outcomes: Sequence[PairOutcome], current: ResolutionConfig,
              min_precision: float = 0.98) -> Calibration:
    """Thresholds on the pairs' scores (single-candidate pairs: no runner-up effects)."""
    steps = [round(0.5 + 0.01 * i, 2) for i in range(50)]
    curve: list[tuple[float, float, float]] = []
    best: tuple[float, float, Metrics] | None = None
    for t, m in _metrics_at(outcomes, steps):
        curve.append((t, m.precision, m.recall))
        key = (1.0 if m.precision >= min_precision else 0.0, m.f1)
        if best is None or key > (best[0], best[2].f1):
            best = (key[0], t, m)
    assert best is not None
    # the middle of the best plateau: as far from both kinds of error as the data allows
    plateau = [t for t, p, r in curve
               if (1.0 if p >= min_precision else 0.0) == best[0]
               and metrics_f1(p, r) >= best[2].f1 - 1e-9]
    match = plateau[len(plateau) // 2] if plateau else best[1]
    at = next(m for t, m in _metrics_at(outcomes, [match]))
    negatives = [o.score for o in outcomes if not o.pair.same]
    spread = current.auto_threshold - current.match_threshold
    auto = min(0.99, max(round(match + spread, 2), round(max(negatives, default=0.0) + 0.01, 2)))
    gap = current.match_threshold - current.ambiguity_threshold
    return Calibration(match_threshold=match, auto_threshold=auto,
                       ambiguity_threshold=round(max(0.0, match - gap), 2),
                       at_operating_point=at, curve=curve)


def metrics_f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _metrics_at(outcomes: Sequence[PairOutcome], thresholds: Sequence[float]
                ) -> list[tuple[float, Metrics]]:
    out = []
    for t in thresholds:
        tp = sum(o.score >= t and o.pair.same for o in outcomes)
        fp = sum(o.score >= t and not o.pair.same for o in outcomes)
        fn = sum(o.score < t and o.pair.same for o in outcomes)
        out.append((t, metrics(tp, fp, fn, len(outcomes))))
    return out
