"""Metric functions of ``bench.quality`` (pure: no stores, unit-tested on hand-made cases)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

_PUNCT = re.compile(r"[^\w\s]")
_POSSESSIVE = re.compile(r"['’]s\b")
_LEADING = ("the ", "a ", "an ")


def normalize(text: str) -> str:
    """Lower case, no possessive 's, punctuation to spaces, no leading article."""
    text = _POSSESSIVE.sub("", text.lower())
    text = " ".join(_PUNCT.sub(" ", text).split())
    for article in _LEADING:
        text = text.removeprefix(article)
    return text


def contains(haystack: str, needle: str) -> bool:
    """``needle`` occurs in ``haystack`` as whole words, after normalization."""
    n, h = normalize(needle), normalize(haystack)
    return bool(n) and re.search(rf"(?<!\w){re.escape(n)}(?!\w)", h) is not None


def any_in(text: str, answers: Iterable[str]) -> bool:
    return any(contains(text, a) for a in answers)


def ratio(num: float, den: float) -> float | None:
    return round(num / den, 4) if den else None


def f1(p: float | None, r: float | None) -> float | None:
    if p is None or r is None:
        return None
    return round(2 * p * r / (p + r), 4) if p + r else 0.0


# --------------------------------------------------------------------------- entities
@dataclass
class GraphEntity:
    id: str
    name: str
    type: str
    aliases: list[str] = field(default_factory=list)

    def name_keys(self) -> set[str]:
        return {normalize(x) for x in [self.name, *self.aliases] if normalize(x)}


@dataclass
class EntityScores:
    precision: float | None
    recall: float | None
    matched_graph: int
    graph_total: int
    found_gold: int
    gold_total: int
    recall_by_kind: dict[str, float | None]
    gold_to_graph: dict[str, set[str]]


def form_index(gold_forms: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """normalized surface form -> gold entity ids that were written that way."""
    index: dict[str, set[str]] = {}
    for eid, forms in gold_forms.items():
        for f in forms:
            if normalize(f):
                index.setdefault(normalize(f), set()).add(eid)
    return index


def entity_scores(gold_forms: Mapping[str, Iterable[str]], gold_kind: Mapping[str, str],
                  graph: Sequence[GraphEntity]) -> EntityScores:
    """Precision: graph entities whose name or an alias is some gold surface form.
    Recall: gold entities with a graph entity carrying one of their forms.
    ``gold_to_graph`` uses only forms that name exactly one gold entity."""
    index = form_index(gold_forms)
    matched = 0
    found: dict[str, set[str]] = {}
    for g in graph:
        hit = False
        for key in g.name_keys():
            owners = index.get(key)
            if owners:
                hit = True
                if len(owners) == 1:
                    found.setdefault(next(iter(owners)), set()).add(g.id)
                else:
                    for owner in owners:
                        found.setdefault(owner, set())
        matched += hit
    kinds = Counter(gold_kind[e] for e in gold_forms)
    found_kinds = Counter(gold_kind[e] for e in found)
    return EntityScores(
        precision=ratio(matched, len(graph)), recall=ratio(len(found), len(gold_forms)),
        matched_graph=matched, graph_total=len(graph), found_gold=len(found),
        gold_total=len(gold_forms),
        recall_by_kind={k: ratio(found_kinds[k], n) for k, n in sorted(kinds.items())},
        gold_to_graph={k: v for k, v in found.items() if v})


# --------------------------------------------------------------------------- relations
@dataclass
class GoldRelation:
    id: str
    type: str
    subject: str
    object: str
    valid_to: str | None = None


@dataclass
class GraphFact:
    source: str
    target: str
    type: str
    invalid_at: str | None = None


@dataclass
class RelationScores:
    typed_recall: float | None
    untyped_recall: float | None
    evaluated: int
    typed_by_type: dict[str, float | None]
    ended_invalidated: float | None  # of ended gold relations found typed


INVERSE = {"REPORTS_TO": "MANAGES", "MANAGES": "REPORTS_TO"}


def relation_scores(gold: Sequence[GoldRelation], gold_to_graph: Mapping[str, set[str]],
                    facts: Sequence[GraphFact]) -> RelationScores:
    """Untyped: some fact joins the two endpoints (either direction). Typed: same type and
    direction (or the inverse type in reverse, e.g. MANAGES for REPORTS_TO)."""
    by_pair: dict[tuple[str, str], list[GraphFact]] = {}
    for f in facts:
        by_pair.setdefault((f.source, f.target), []).append(f)
    typed = untyped = 0
    per_type: dict[str, list[int]] = {}
    ended = ended_invalid = 0
    for rel in gold:
        subs, objs = gold_to_graph.get(rel.subject, set()), gold_to_graph.get(rel.object, set())
        forward = [f for s in subs for o in objs for f in by_pair.get((s, o), [])]
        backward = [f for s in subs for o in objs for f in by_pair.get((o, s), [])]
        hit_typed = [f for f in forward if f.type == rel.type] + [
            f for f in backward if INVERSE.get(rel.type) == f.type]
        untyped += bool(forward or backward)
        typed += bool(hit_typed)
        row = per_type.setdefault(rel.type, [0, 0])
        row[0] += bool(hit_typed)
        row[1] += 1
        if rel.valid_to and hit_typed:
            ended += 1
            ended_invalid += any(f.invalid_at for f in hit_typed)
    return RelationScores(
        typed_recall=ratio(typed, len(gold)), untyped_recall=ratio(untyped, len(gold)),
        evaluated=len(gold),
        typed_by_type={k: ratio(v[0], v[1]) for k, v in sorted(per_type.items())},
        ended_invalidated=ratio(ended_invalid, ended))


# --------------------------------------------------------------------------- resolution
@dataclass
class PairScores:
    precision: float | None
    recall: float | None
    f1: float | None
    mentions: int


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def pairwise_scores(assignments: Sequence[tuple[str, str]]) -> PairScores:
    """(gold id, predicted id) per mention: mention pairs with the same gold entity should
    share the predicted one. Counted from cluster sizes, not by enumerating pairs."""
    joint = Counter(assignments)
    gold = Counter(g for g, _ in assignments)
    pred = Counter(p for _, p in assignments)
    tp = sum(_pairs(n) for n in joint.values())
    p = ratio(tp, sum(_pairs(n) for n in pred.values()))
    r = ratio(tp, sum(_pairs(n) for n in gold.values()))
    return PairScores(p, r, f1(p, r), len(assignments))


def assign_mentions(kw_mentions: Iterable[tuple[str, str, str]],
                    gold_mentions: Mapping[str, Sequence[tuple[str, str]]]
                    ) -> list[tuple[str, str]]:
    """Knotwork mentions (doc, text, entity id) to (gold id, predicted id), using the gold
    mentions of the same document; a mention whose text names no gold entity of that
    document, or several, is left out (an extraction matter, not resolution)."""
    per_doc: dict[str, dict[str, set[str]]] = {}
    for doc, rows in gold_mentions.items():
        index: dict[str, set[str]] = {}
        for eid, form in rows:
            index.setdefault(normalize(form), set()).add(eid)
        per_doc[doc] = index
    out = []
    for doc, text, pred in kw_mentions:
        owners = per_doc.get(doc, {}).get(normalize(text), set())
        if len(owners) == 1:
            out.append((next(iter(owners)), pred))
    return out


def forms_together(pairs: Sequence[tuple[str, str, bool]],
                   key_owner: Mapping[str, str | None]) -> list[bool]:
    """Per form pair: both forms are carried by one and the same graph entity."""
    out = []
    for a, b, _ in pairs:
        ga, gb = key_owner.get(normalize(a)), key_owner.get(normalize(b))
        out.append(ga is not None and ga == gb)
    return out


def pair_classification_scores(pairs: Sequence[tuple[str, str, bool]],
                               linked: Sequence[bool]) -> PairScores:
    """Precision / recall / F1 of a same-or-not decision per gold pair (``mentions`` = the
    number of pairs): true positives are same pairs decided linked."""
    tp = sum(1 for (_, _, same), link in zip(pairs, linked, strict=True) if same and link)
    p = ratio(tp, sum(linked))
    r = ratio(tp, sum(1 for _, _, same in pairs if same))
    return PairScores(p, r, f1(p, r), len(pairs))


def baseline_ratio(ours: float | None, theirs: float | None, digits: int = 2) -> float | None:
    """``ours / theirs`` (None when either is missing or the baseline's figure is 0)."""
    if ours is None or theirs is None or theirs == 0:
        return None
    return round(ours / theirs, digits)


def baseline_ratios(ours: Mapping[str, float | None], theirs: Mapping[str, float | None],
                    digits: int = 2) -> dict[str, float | None]:
    """:func:`baseline_ratio` for every figure both sides report, in ``ours``' order."""
    return {k: baseline_ratio(v, theirs[k], digits) for k, v in ours.items() if k in theirs}


def form_pair_scores(pairs: Sequence[tuple[str, str, bool]],
                     key_owner: Mapping[str, str | None]) -> tuple[float | None, float | None]:
    """(alias pairs resolved together, confusable pairs wrongly merged) for surface form
    pairs, given normalized key -> the one graph entity carrying it (None: several/none)."""
    return together_rates(pairs, forms_together(pairs, key_owner))


def together_rates(pairs: Sequence[tuple[str, str, bool]],
                   linked: Sequence[bool]) -> tuple[float | None, float | None]:
    """(share of same pairs linked, share of different pairs linked)."""
    same_ok = same_n = diff_merged = diff_n = 0
    for (_, _, same), together in zip(pairs, linked, strict=True):
        if same:
            same_n += 1
            same_ok += together
        else:
            diff_n += 1
            diff_merged += together
    return ratio(same_ok, same_n), ratio(diff_merged, diff_n)


# --------------------------------------------------------------------------- questions
@dataclass
class Judged:
    answered: bool
    in_answer: bool
    citation_precision: float | None
    abstained: bool
    coverage: float | None = None
    temporal_strict: bool | None = None


def judge(category: str, answers: Sequence[str], items: Sequence[Sequence[str]],
          wrong: Sequence[str], match: str, supporting: Sequence[str], answer: str,
          cited: Sequence[tuple[str, str]], abstained: bool) -> Judged:
    """One question. ``cited``: (document source id, citation text) pairs."""
    texts = [answer] + ([t for _, t in cited] if match == "cited" else [])
    blob = "\n".join(texts)
    docs = list(dict.fromkeys(d for d, _ in cited))
    cp = ratio(sum(d in set(supporting) for d in docs), len(docs)) if supporting else None
    if category == "unanswerable":
        return Judged(abstained, abstained, None, abstained)
    if items:
        hits = sum(any_in(blob, forms) for forms in items)
        cov = hits / len(items)
        return Judged(cov >= 0.5, cov >= 0.5, cp, abstained, round(cov, 4))
    in_answer = any_in(answer, answers)
    answered = in_answer or (match == "cited" and any_in(blob, answers))
    strict = None
    if wrong:
        strict = in_answer and not any_in(answer, wrong)
    return Judged(answered, in_answer, cp, abstained, None, strict)
