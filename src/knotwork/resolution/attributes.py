"""Attribute comparisons (splink style) as serialisable data.

A mention and an entity may carry attributes (date of birth, address, postcode, employee id,
email ...: ``MentionQuery.properties`` / ``CandidateRecord.properties``). Each
:class:`AttributeComparison` compares one attribute and assigns a level:

- ``exact``: equal after normalisation (case, spaces);
- a fuzzy level (``AttributeLevel``): similarity (the comparison's ``method``) at least
  ``min_similarity``, the first that fits in the given order;
- ``missing``: either side has no value (neutral by default: weight 0);
- ``conflict``: both present and no level fits.

Each level has a *match weight* (splink's log2 Bayes factor, log2(m/u)). The weights of all
comparisons are added to the log2-odds of the name / embedding / type score, so the result
stays a 0..1 score against the same thresholds. With no comparisons configured, or no
attribute present on either side, the score is unchanged (attributes default to neutral).
``AttributeModel.name_levels`` weigh the name similarity too, once some attribute was compared
(unrelated names count against a merge that rests on a shared postcode).

Weights are data: fitted from labelled pairs with :func:`fit_weights` (m from the matches,
u from the non-matches) or written by hand; the whole :class:`AttributeModel` round-trips JSON.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz.distance import DamerauLevenshtein, JaroWinkler, Levenshtein

EXACT, MISSING, CONFLICT = "exact", "missing", "conflict"


class Method(StrEnum):
    EXACT = "exact"  # no fuzzy levels: exact or conflict
    JARO_WINKLER = "jaro_winkler"
    LEVENSHTEIN = "levenshtein"  # normalised similarity: 1 - distance / longer length
    DAMERAU_LEVENSHTEIN = "damerau_levenshtein"  # transpositions count as one edit
    NUMERIC = "numeric"  # 1 - |a - b| / max(|a|, |b|)


class AttributeLevel(BaseModel):
    """A fuzzy band: similarity >= ``min_similarity`` (checked in the order given)."""

    model_config = ConfigDict(extra="forbid")
    label: str
    min_similarity: float = Field(ge=0.0, le=1.0)
    weight: float


class AttributeComparison(BaseModel):
    model_config = ConfigDict(extra="forbid")
    attribute: str
    method: Method = Method.EXACT
    exact_weight: float = Field(default=4.0)
    levels: tuple[AttributeLevel, ...] = ()
    missing_weight: float = 0.0
    conflict_weight: float = Field(default=-4.0)

    def labels(self) -> list[str]:
        return [EXACT, *(lv.label for lv in self.levels), MISSING, CONFLICT]


class AttributeModel(BaseModel):
    """The comparisons of a resolution config; ``floor`` clamps the base score into
    [floor, 1 - floor] before the log-odds are taken (a 1.0 name match is not infinite)."""

    model_config = ConfigDict(extra="forbid")
    comparisons: tuple[AttributeComparison, ...] = ()
    floor: float = Field(default=0.02, gt=0.0, lt=0.5)
    # weights on the name similarity (first level it reaches), added only when some attribute
    # was compared: the base score of two unrelated names of one type is still ~0.33 (the type
    # agrees), too little evidence against when strong attributes agree by chance
    name_levels: tuple[AttributeLevel, ...] = ()


@dataclass(frozen=True, slots=True)
class LevelResult:
    attribute: str
    label: str
    weight: float
    similarity: float | None = None


def normalize_value(value: str | None) -> str:
    return " ".join(value.lower().split()) if value else ""


def similarity(method: Method, a: str, b: str) -> float:
    if a == b:
        return 1.0
    if method is Method.JARO_WINKLER:
        return JaroWinkler.similarity(a, b)
    if method is Method.LEVENSHTEIN:
        return Levenshtein.normalized_similarity(a, b)
    if method is Method.DAMERAU_LEVENSHTEIN:
        return DamerauLevenshtein.normalized_similarity(a, b)
    if method is Method.NUMERIC:
        try:
            x, y = float(a), float(b)
        except ValueError:
            return 0.0
        top = max(abs(x), abs(y))
        return 1.0 - abs(x - y) / top if top else 1.0
    return 0.0


def compare(comparison: AttributeComparison, a: str | None, b: str | None) -> LevelResult:
    """The level of one attribute pair and its weight."""
    na, nb = normalize_value(a), normalize_value(b)
    name = comparison.attribute
    if not na or not nb:
        return LevelResult(name, MISSING, comparison.missing_weight)
    if na == nb:
        return LevelResult(name, EXACT, comparison.exact_weight, 1.0)
    sim = similarity(comparison.method, na, nb)
    for level in comparison.levels:
        if sim >= level.min_similarity - 1e-9:
            return LevelResult(name, level.label, level.weight, round(sim, 4))
    return LevelResult(name, CONFLICT, comparison.conflict_weight, round(sim, 4))


def compare_all(model: AttributeModel, a: Mapping[str, str], b: Mapping[str, str],
                name_similarity: float | None = None) -> list[LevelResult]:
    """Every comparison's level, plus the name level when an attribute was compared."""
    out = [compare(c, a.get(c.attribute), b.get(c.attribute)) for c in model.comparisons]
    if name_similarity is not None and any(r.label != MISSING for r in out):
        for level in model.name_levels:
            if name_similarity >= level.min_similarity - 1e-9:
                out.append(LevelResult("name", level.label, level.weight,
                                       round(name_similarity, 4)))
                break
    return out


def combine(model: AttributeModel, base: float, results: Iterable[LevelResult]) -> float:
    """``base`` moved by the summed match weights in log2-odds space (0 weights: unchanged)."""
    total = sum(r.weight for r in results)
    if total == 0.0:
        return base
    p = min(1.0 - model.floor, max(model.floor, base))
    odds = math.log2(p / (1.0 - p)) + total
    if odds > 60:
        return 1.0
    return 1.0 / (1.0 + 2.0 ** (-odds))


# ------------------------------------------------------------------ fitting (m / u estimates)


def fit_weights(model: AttributeModel,
                pairs: Sequence[tuple[Mapping[str, str], Mapping[str, str], bool]],
                smoothing: float = 1.0, cap: float = 16.0) -> AttributeModel:
    """Weights log2(m / u) per level from labelled attribute pairs (splink's m from labels, u
    from non-matches), Laplace-smoothed and capped at ±``cap``. ``missing`` stays as given
    (absence says nothing about identity unless configured). Levels, methods and the name
    levels are kept."""
    comparisons: list[AttributeComparison] = []
    for comp in model.comparisons:
        labels = comp.labels()
        m = dict.fromkeys(labels, 0.0)
        u = dict.fromkeys(labels, 0.0)
        for a, b, same in pairs:
            label = compare(comp, a.get(comp.attribute), b.get(comp.attribute)).label
            (m if same else u)[label] += 1.0
        present = [lb for lb in labels if lb != MISSING]
        m_total = sum(m[lb] for lb in present) + smoothing * len(present)
        u_total = sum(u[lb] for lb in present) + smoothing * len(present)

        def weight(label: str, m: dict[str, float] = m, u: dict[str, float] = u,
                   m_total: float = m_total, u_total: float = u_total) -> float:
            ratio = ((m[label] + smoothing) / m_total) / ((u[label] + smoothing) / u_total)
            return round(max(-cap, min(cap, math.log2(ratio))), 3)

        comparisons.append(comp.model_copy(update={
            "exact_weight": weight(EXACT), "conflict_weight": weight(CONFLICT),
            "levels": tuple(lv.model_copy(update={"weight": weight(lv.label)})
                            for lv in comp.levels)}))
    return model.model_copy(update={"comparisons": tuple(comparisons)})
