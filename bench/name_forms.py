"""Hit rate and precision of each name-form rule (knotwork.resolution.form_match.FORM_RULES).

    python -m bench.name_forms CORPUS_DIR [CORPUS_DIR ...]

A corpus dir holds ``truth/entities.json`` (``id``, ``type``, ``canonical_name``, ``aliases``)
and ``truth/resolution_pairs.json`` (``a``, ``b``, ``same``). For every rule, over the pairs of
distinct names of one type filed under one form key: how many name pairs it links (``links``),
the share of them that name one gold entity (``precision``), and the share of all same-entity
name pairs it links (``hit_rate``). Then over the labelled mention pairs: how many same pairs
and how many different (confusable) pairs share a key of the rule.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from knotwork.domain.models import EntityType
from knotwork.resolution.form_match import FORM_RULES, FormRule


@dataclass
class RuleStats:
    links: int = 0
    correct: int = 0
    same_pairs: int = 0  # same-entity name pairs in the truth
    found: int = 0  # of those, linked by the rule
    labelled_same: int = 0
    labelled_diff: int = 0

    @property
    def precision(self) -> float:
        return self.correct / self.links if self.links else 0.0

    @property
    def hit_rate(self) -> float:
        return self.found / self.same_pairs if self.same_pairs else 0.0


def _type(value: str) -> EntityType | None:
    try:
        return EntityType(value)
    except ValueError:
        return None


def _keys(rule: FormRule, name: str, etype: EntityType | None) -> set[str]:
    if etype is not None and etype not in rule.types:
        return set()
    return set(rule.keys(name))


def measure(corpus: Path) -> dict[str, RuleStats]:
    entities = json.loads((corpus / "truth" / "entities.json").read_text())
    pairs = json.loads((corpus / "truth" / "resolution_pairs.json").read_text())
    names: list[tuple[str, str, EntityType | None]] = []  # (name, entity id, type)
    for e in entities:
        etype = _type(e.get("type", ""))
        for n in dict.fromkeys([e["canonical_name"], *e.get("aliases", [])]):
            if n and not n.startswith("@"):
                names.append((n, e["id"], etype))
    type_of = {n: t for n, _, t in names}
    out: dict[str, RuleStats] = {}
    same_total = sum(1 for (_, a, ta), (_, b, tb) in combinations(names, 2) if a == b)
    for rule in FORM_RULES:
        stats = RuleStats(same_pairs=same_total)
        by_key: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for n, eid, etype in names:
            for k in _keys(rule, n, etype):
                by_key[(str(etype), k)].append((n, eid))
        linked: set[tuple[str, str]] = set()
        for members in by_key.values():
            for (na, ea), (nb, eb) in combinations(members, 2):
                pair = (min(na, nb), max(na, nb))
                if na == nb or pair in linked:
                    continue
                linked.add(pair)
                stats.links += 1
                stats.correct += ea == eb
                stats.found += ea == eb
        for p in pairs:
            ka = _keys(rule, p["a"], type_of.get(p["a"]))
            kb = _keys(rule, p["b"], type_of.get(p["b"]))
            if ka & kb:
                if p["same"]:
                    stats.labelled_same += 1
                else:
                    stats.labelled_diff += 1
        out[rule.name] = stats
    return out


def report(corpus: Path, stats: dict[str, RuleStats]) -> list[str]:
    lines = [f"{corpus.name}: rule, links, precision, hit_rate, labelled same / different"]
    for name, s in stats.items():
        lines.append(f"  {name:22s} {s.links:5d} {s.precision:6.3f} {s.hit_rate:6.3f} "
                     f"{s.labelled_same:4d} / {s.labelled_diff}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", type=Path, nargs="+")
    a = ap.parse_args(argv)
    for corpus in a.corpora:
        print("\n".join(report(corpus, measure(corpus))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
