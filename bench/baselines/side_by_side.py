"""The resolution and community baselines of ``bench.quality``, run in the same process.

- :func:`resolution_baseline`: recordlinkage's classic linkage
  (:mod:`bench.baselines.classic_linkage`) on the world's resolution pairs and on the very
  mentions Knotwork's resolution P/R/F1 is computed on.
- :func:`community_baseline`: graspologic's hierarchical Leiden next to Knotwork's on the
  store's projected fact graph (:mod:`bench.baselines.graspologic_leiden`).

Each returns Knotwork's figures, the baseline's, and ``ratio`` = Knotwork / baseline per
figure (for seconds and ``confusable_pairs_merged`` lower is better: a ratio below 1 means
Knotwork is faster, or merges fewer different people).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from bench.quality_metrics import (
    baseline_ratios,
    pair_classification_scores,
    pairwise_scores,
    together_rates,
)

if TYPE_CHECKING:
    from knotwork.core import Knotwork

RESOLUTION_KEYS = ("resolution_precision", "resolution_recall", "resolution_f1",
                   "resolution_pair_precision", "resolution_pair_recall", "resolution_pair_f1",
                   "alias_pairs_together", "confusable_pairs_merged")
COMMUNITY_KEYS = ("modularity", "team_nmi", "team_precision", "team_recall", "team_f1",
                  "leaves", "seconds")


def resolution_baseline(pairs: Sequence[tuple[str, str, bool]],
                        mention_forms: Sequence[tuple[str, str]],
                        ours: Mapping[str, object]) -> dict[str, object]:
    from bench.baselines.classic_linkage import classify_pairs, cluster_forms

    t0 = time.perf_counter()
    linked = classify_pairs([(a, b) for a, b, _ in pairs])
    pair = pair_classification_scores(pairs, linked)
    alias_ok, merged = together_rates(pairs, linked)
    clusters = cluster_forms([t for _, t in mention_forms])
    mentions = pairwise_scores([(g, str(clusters[t])) for g, t in mention_forms if t in clusters])
    theirs: dict[str, float | None] = {
        "resolution_precision": mentions.precision, "resolution_recall": mentions.recall,
        "resolution_f1": mentions.f1, "resolution_pair_precision": pair.precision,
        "resolution_pair_recall": pair.recall, "resolution_pair_f1": pair.f1,
        "alias_pairs_together": alias_ok, "confusable_pairs_merged": merged}
    mine = {k: ours.get(k) for k in RESOLUTION_KEYS}
    return {"baseline": "recordlinkage classic (Jaro-Winkler >= 0.85 on whole form, given and "
                        "family name; >= 2 of 3 agree)",
            "mentions": mentions.mentions, "pairs": pair.mentions,
            "forms": len(clusters), "form_clusters": len(set(clusters.values())),
            "seconds": round(time.perf_counter() - t0, 2),
            "knotwork": mine, "recordlinkage": theirs,
            "ratio": baseline_ratios(mine, theirs)}  # type: ignore[arg-type]


def team_of_graph(communities: Mapping[str, list[dict[str, object]]],
                  gold_to_graph: Mapping[str, set[str]]) -> dict[str, str]:
    """graph entity id -> the gold team of the person it is the only match of."""
    out: dict[str, str] = {}
    for team in communities.get("teams", []):
        for person in team["members"]:  # type: ignore[attr-defined]
            ids = gold_to_graph.get(str(person), set())
            if len(ids) == 1:
                out[next(iter(ids))] = str(team["id"])
    return out


def community_baseline(kw: Knotwork, communities: Mapping[str, list[dict[str, object]]],
                       gold_to_graph: Mapping[str, set[str]]) -> dict[str, object]:
    from bench.baselines.graspologic_leiden import graspologic_partition, knotwork_partition
    from knotwork.communities.projection import project
    from knotwork.domain.timeutil import utcnow

    rt, group, s = kw.runtime, kw.settings.group, kw.settings
    graph = project(rt.graph.list_entities(group), rt.graph.list_facts(group), utcnow())
    team_of = team_of_graph(communities, gold_to_graph)
    ours = knotwork_partition(graph, s.community_resolution, s.community_max_size,
                              s.community_seed, team_of, s.community_engine)
    theirs = graspologic_partition(graph, s.community_max_size, s.community_seed, team_of)
    mine = {k: v for k, v in asdict(ours).items() if k in COMMUNITY_KEYS}
    out: dict[str, object] = {
        "nodes": len(graph.nodes), "edges": len(graph.edges),
        "people_with_team": sum(1 for n in team_of if n in graph.index),
        "max_size": s.community_max_size, "seed": s.community_seed,
        "knotwork": mine, "graspologic": None, "ratio": None}
    if theirs is not None:
        other = {k: v for k, v in asdict(theirs).items() if k in COMMUNITY_KEYS}
        out["graspologic"] = other
        out["ratio"] = baseline_ratios(mine, other)
    else:
        out["note"] = "graspologic-native is not installed (pip install -e '.[bench]')"
    return out


def _fmt(value: object) -> str:
    return "-" if value is None else str(value)


def print_baselines(report: Mapping[str, object], console: Console) -> None:
    table = Table(title="Baselines, same process (ratio = Knotwork / baseline; lower is "
                        "better for confusable_pairs_merged and seconds)")
    for col in ("figure", "Knotwork", "baseline", "ratio"):
        table.add_column(col, justify="right")
    res = report.get("resolution_baseline")
    if isinstance(res, dict):
        ours, theirs, ratio = res["knotwork"], res["recordlinkage"], res["ratio"]
        for key in RESOLUTION_KEYS:
            table.add_row(f"{key} (recordlinkage)", _fmt(ours[key]), _fmt(theirs[key]),
                          _fmt(ratio.get(key)))
    com = report.get("community_baseline")
    if isinstance(com, dict):
        ours, theirs, ratio = com["knotwork"], com["graspologic"] or {}, com["ratio"] or {}
        for key in COMMUNITY_KEYS:
            table.add_row(f"leaf {key} (graspologic)", _fmt(ours[key]), _fmt(theirs.get(key)),
                          _fmt(ratio.get(key)))
        if com.get("note"):
            table.caption = str(com["note"])
    console.print(table)
