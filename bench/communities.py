"""Community detection benchmark: Knotwork's hierarchical Leiden next to graspologic's.

    python -m bench.communities [--n 1000] [--big 100000] [--seed 7] [--max-size 1000]

On ``networkx.LFR_benchmark_graph`` graphs (ground truth in the ``community`` node attribute)
it reports, for Knotwork (igraph + leidenalg) and for graspologic's ``hierarchical_leiden``
(the Rust core ``graspologic_native.hierarchical_leiden`` that graspologic's Python wrapper
calls), NMI of the final (leaf) clusters against the truth, modularity, cluster count and the
time ratio (Knotwork / graspologic, same max cluster size and seed; ``--repeat`` rounds that run
both in turn, best and median of each).
Then the incremental scenario with the product defaults (max size 10): a full build (detection,
metrics, extractive summaries of every community) against adding 1% new facts (some with new
entities) inside a few true communities: modal assignment, stale marking, re-summarizing only
the stale communities. Prints a table and appends a JSON line to bench/results/communities.jsonl.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.table import Table

from knotwork.communities.builder import (
    BuildParams,
    BuiltCommunities,
    apply_summary,
    build_communities,
    summarize_members,
)
from knotwork.communities.detection import detect, modularity, to_igraph
from knotwork.communities.incremental import (
    assign_new_entities,
    needs_rebuild,
    stale_communities,
)
from knotwork.communities.projection import EntityView, FactView, ProjectedGraph, from_edge_list
from knotwork.communities.summaries import ExtractiveSummarizer
from knotwork.domain.models import Community
from knotwork.settings import LeidenEngine, Settings

RESULTS = Path(__file__).resolve().parent / "results" / "communities.jsonl"
T = TypeVar("T")


# --------------------------------------------------------------------------- graphs


def lfr(n: int, seed: int) -> tuple[ProjectedGraph, list[int], dict[str, Any]]:
    """An LFR graph as a projection, the true community per node, and its parameters."""
    import networkx as nx

    if n <= 5000:
        params: dict[str, Any] = {"tau1": 3.0, "tau2": 1.5, "mu": 0.1, "average_degree": 10,
                                  "max_degree": 50, "min_community": 20, "max_community": 100}
    else:  # wider community sizes; these settings generate 100k nodes in ~10 s
        params = {"tau1": 2.5, "tau2": 1.5, "mu": 0.1, "average_degree": 10,
                  "max_degree": 100, "min_community": 50, "max_community": 500}
    started = time.perf_counter()
    g = nx.LFR_benchmark_graph(n, seed=seed, max_iters=2000, **params)
    params["generate_s"] = round(time.perf_counter() - started, 2)
    graph = from_edge_list([(f"n{a:07d}", f"n{b:07d}", 1.0) for a, b in g.edges() if a != b])
    label: dict[int, int] = {}
    for k, members in enumerate(sorted({frozenset(g.nodes[v]["community"]) for v in g},
                                       key=min)):
        for v in members:
            label[v] = k
    params["communities"] = len(set(label.values()))
    return graph, [label[int(name[1:])] for name in graph.nodes], params


def best_of(repeat: int, run: Callable[[], T]) -> tuple[float, T]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    assert result is not None
    return best, result


# --------------------------------------------------------------------------- detection


def knotwork_leaves(graph: ProjectedGraph, max_size: int, seed: int,
                    engine: LeidenEngine = LeidenEngine.IGRAPH) -> list[int]:
    return detect(graph, resolution=1.0, max_size=max_size, seed=seed,
                  engine=engine).membership(0)


def graspologic_leaves(edges: list[tuple[str, str, float]], index: dict[str, int],
                       max_size: int, seed: int) -> list[int]:
    import graspologic_native as gn

    clusters = gn.hierarchical_leiden(edges, resolution=1.0, randomness=0.001, iterations=1,
                                      use_modularity=True, max_cluster_size=max_size, seed=seed)
    membership = [-1] * len(index)
    for entry in clusters:
        if entry.is_final_cluster:
            membership[index[entry.node]] = entry.cluster
    return membership


def interleaved(repeat: int, runs: dict[str, Callable[[], T]]
                ) -> dict[str, tuple[list[float], list[float], T]]:
    """``repeat`` rounds, each running every method once in turn (a shared machine's load
    hits all of them alike): wall and CPU (this process) seconds per method, its last result."""
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    results: dict[str, T] = {}
    for _ in range(repeat):
        for name, run in runs.items():
            started, cpu_started = time.perf_counter(), time.process_time()
            results[name] = run()
            cpu[name].append(time.process_time() - cpu_started)
            wall[name].append(time.perf_counter() - started)
    return {name: (wall[name], cpu[name], results[name]) for name in runs}


def compare(graph: ProjectedGraph, truth: list[int], max_size: int, seed: int,
            repeat: int, alt_repeat: int) -> dict[str, Any]:
    """Knotwork (igraph) and graspologic interleaved, ``repeat`` rounds: best and median
    seconds and the ratio of each; Knotwork with leidenalg: best of ``alt_repeat``."""
    from sklearn.metrics import normalized_mutual_info_score as nmi

    g = to_igraph(graph)
    edges = [(graph.nodes[i], graph.nodes[j], w) for i, j, w in graph.edges]
    row: dict[str, Any] = {"nodes": len(graph.nodes), "edges": len(graph.edges),
                           "max_size": max_size, "truth_modularity": modularity(g, truth)}
    runs: dict[str, Callable[[], list[int]]] = {
        "knotwork": lambda: knotwork_leaves(graph, max_size, seed)}
    try:
        import graspologic_native  # noqa: F401
    except ImportError:
        row["graspologic"] = None
    else:
        runs["graspologic"] = lambda: graspologic_leaves(edges, graph.index, max_size, seed)
    timed = interleaved(repeat, runs)
    for name, (seconds, cpu, found) in timed.items():
        row[name] = {"seconds": min(seconds), "median_seconds": statistics.median(seconds),
                     "runs": seconds, "median_cpu_seconds": statistics.median(cpu),
                     "cpu_runs": cpu, "nmi": nmi(truth, found),
                     "modularity": modularity(g, found), "clusters": len(set(found))}
    ours = timed["knotwork"][2]
    row["deterministic"] = knotwork_leaves(graph, max_size, seed) == ours
    alt_s, alt = best_of(alt_repeat, lambda: knotwork_leaves(graph, max_size, seed,
                                                         LeidenEngine.LEIDENALG))
    row["knotwork_leidenalg"] = {"seconds": alt_s, "nmi": nmi(truth, alt),
                                 "modularity": modularity(g, alt), "clusters": len(set(alt))}
    theirs = row.get("graspologic")
    if theirs:
        row["time_ratio"] = row["knotwork"]["seconds"] / theirs["seconds"]
        row["time_ratio_median"] = (row["knotwork"]["median_seconds"]
                                    / theirs["median_seconds"])
        row["cpu_ratio_median"] = (row["knotwork"]["median_cpu_seconds"]
                                   / theirs["median_cpu_seconds"])
        row["time_ratio_leidenalg"] = alt_s / theirs["seconds"]
    return row


# --------------------------------------------------------------------------- incremental


def new_facts(graph: ProjectedGraph, truth: list[int], share: float, active_share: float,
              seed: int) -> tuple[list[EntityView], list[FactView], int]:
    """``share`` x |facts| new facts inside ``active_share`` of the true communities; half of
    them bring a new entity, attached to a member of the community."""
    rng = random.Random(seed)
    by_truth: dict[int, list[str]] = {}
    for i, label in enumerate(truth):
        by_truth.setdefault(label, []).append(graph.nodes[i])
    labels = sorted(by_truth)
    active = rng.sample(labels, max(1, round(len(labels) * active_share)))
    count = max(1, round(len(graph.facts) * share))
    entities: list[EntityView] = []
    facts: list[FactView] = []
    for k in range(count):
        members = by_truth[active[k % len(active)]]
        source = rng.choice(members)
        if k % 2 == 0:
            new = EntityView(f"new{k:07d}", f"New {k}", "CONCEPT")
            entities.append(new)
            members.append(new.id)
            target = new.id
        else:
            target = rng.choice(members)
            if target == source:
                continue
        facts.append(FactView(f"nf{k:07d}", source, target, "RELATED_TO", f"{source} - {target}",
                              1.0, (f"ep-new-{k}",)))
    return entities, facts, len(active)


def incremental(graph: ProjectedGraph, built: BuiltCommunities, entities: list[EntityView],
                facts: list[FactView], params: BuildParams, threshold: float,
                now: datetime) -> dict[str, Any]:
    """Upkeep in memory with the library's functions; the incident index stands in for the
    graph store's adjacency, so building it for the base graph is not timed."""
    summarizer = ExtractiveSummarizer()
    incident: dict[str, list[FactView]] = {n: [] for n in graph.nodes}
    for fact in graph.facts:
        incident[fact.source].append(fact)
        incident[fact.target].append(fact)
    views = dict(graph.entities)
    communities: dict[str, Community] = {c.id: c for c in built.communities}
    members = {c.id: set(c.entity_ids) for c in built.communities}
    leaf_of = {e: c.id for c in built.communities if c.level == 0 for e in c.entity_ids}
    changed = len(entities) + len(facts)
    rebuild = needs_rebuild(changed, len(graph.nodes) + len(graph.facts), threshold)

    started = time.perf_counter()
    for entity in entities:
        views[entity.id] = entity
        incident[entity.id] = []
    for fact in facts:
        incident[fact.source].append(fact)
        incident[fact.target].append(fact)
    endpoints = sorted({e for f in facts for e in (f.source, f.target)})
    unassigned = [e for e in endpoints if e not in leaf_of]
    adjacency = {e: [(f.target if f.source == e else f.source, f.weight) for f in incident[e]]
                 for e in unassigned}
    assigned = assign_new_entities(unassigned, adjacency, leaf_of)

    def parent(cid: str) -> str | None:
        return communities[cid].parent_id

    for entity_id, leaf in assigned.items():
        cid: str | None = leaf
        while cid is not None:
            members[cid].add(entity_id)
            cid = parent(cid)
        leaf_of[entity_id] = leaf
    stale = stale_communities(endpoints, leaf_of, parent)
    weight = built.total_weight + sum(f.weight for f in facts)
    for cid in sorted(stale, key=lambda c: (communities[c].level, c)):
        community = communities[cid]
        ids = sorted(members[cid])
        touching = {f.id: f for m in ids for f in incident[m]}.values()
        children = [communities[c].name for c in community.child_ids]
        metrics, report = summarize_members(
            [views[m] for m in ids], touching, level=community.level, total_weight=weight,
            resolution=params.resolution, summarizer=summarizer, children=children)
        fresh = apply_summary(community.model_copy(update={"entity_ids": ids,
                                                           "entity_count": len(ids)}),
                              metrics, report, summarizer.name, now)
        communities[cid] = fresh
    seconds = time.perf_counter() - started
    resummarized = sum(1 for c in communities.values() if c.summary_version == 2)
    assert resummarized == len(stale), (resummarized, len(stale))
    return {"seconds": seconds, "new_facts": len(facts), "new_entities": len(entities),
            "assigned": len(assigned), "stale": len(stale), "resummarized": resummarized,
            "communities": len(communities), "changed_share": changed / (len(graph.nodes)
                                                                          + len(graph.facts)),
            "rebuild_due": rebuild}


def scenario(graph: ProjectedGraph, truth: list[int], seed: int) -> dict[str, Any]:
    settings = Settings()
    params = BuildParams(resolution=settings.community_resolution,
                         max_size=settings.community_max_size, seed=settings.community_seed)
    now = datetime.now(UTC).replace(microsecond=0)
    started = time.perf_counter()
    built = build_communities(graph, "bench", params=params, summarizer=ExtractiveSummarizer(),
                              now=now)
    full_s = time.perf_counter() - started
    entities, facts, active = new_facts(graph, truth, 0.01, 0.02, seed)
    row = incremental(graph, built, entities, facts, params,
                      settings.community_rebuild_threshold, now)
    row.update(full_seconds=full_s, active_true_communities=active, max_size=params.max_size,
               levels=built.hierarchy.levels, ratio=row["seconds"] / full_s)
    return row


# --------------------------------------------------------------------------- report


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=Path(__file__).resolve().parent, timeout=10,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _print(console: Console, runs: list[dict[str, Any]], scenarios: list[dict[str, Any]]) -> None:
    table = Table(title="Hierarchical Leiden on LFR graphs (leaf clusters)")
    for column in ("graph", "max size", "method", "NMI", "modularity", "clusters", "best s",
                   "median s", "ratio (best)", "ratio (median)"):
        table.add_column(column, justify="right" if column != "method" else "left")
    for run in runs:
        name = f"n={run['nodes']:,} m={run['edges']:,}"
        for method, label, key in (("knotwork", "knotwork (igraph)", "time_ratio"),
                                   ("knotwork_leidenalg", "knotwork (leidenalg)",
                                    "time_ratio_leidenalg"),
                                   ("graspologic", "graspologic", "")):
            figures = run.get(method)
            if figures is None:
                table.add_row(name, str(run["max_size"]), label, "-", "-", "-", "-", "-",
                              "not installed", "")
                continue
            ratio = f"{run[key]:.2f}" if key and run.get(key) else ""
            median_ratio = run.get(f"{key}_median") if key else None
            median = figures.get("median_seconds")
            table.add_row(name, str(run["max_size"]), label, f"{figures['nmi']:.3f}",
                          f"{figures['modularity']:.4f}", f"{figures['clusters']:,}",
                          f"{figures['seconds']:.3f}", f"{median:.3f}" if median else "", ratio,
                          f"{median_ratio:.2f}" if median_ratio else "")
    console.print(table)
    inc = Table(title="Incremental upkeep: +1% facts vs full rebuild (product defaults)")
    for column in ("graph", "levels", "communities", "new facts", "new entities", "stale",
                   "re-summarized", "incremental s", "full s", "ratio"):
        inc.add_column(column, justify="right")
    for row in scenarios:
        inc.add_row(f"n={row['nodes']:,}", str(row["levels"]), f"{row['communities']:,}",
                    f"{row['new_facts']:,}", f"{row['new_entities']:,}", f"{row['stale']:,}",
                    f"{row['resummarized']:,}", f"{row['seconds']:.3f}",
                    f"{row['full_seconds']:.2f}", f"{row['ratio']:.3f}")
    console.print(inc)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="the small LFR graph")
    parser.add_argument("--big", type=int, default=100_000, help="the large LFR graph (0: skip)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-size", type=int, default=1000,
                        help="max cluster size for the comparison (graspologic's default)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="timed rounds, Knotwork and graspologic interleaved; best and median "
                             "kept (leidenalg: best of this many, once above 10k nodes)")
    args = parser.parse_args(argv)
    console = Console(width=132)
    runs: list[dict[str, Any]] = []
    scenarios: list[dict[str, Any]] = []
    graphs: list[dict[str, Any]] = []
    for n in [size for size in (args.n, args.big) if size > 0]:
        with console.status(f"generating LFR n={n:,}"):
            graph, truth, params = lfr(n, args.seed)
        graphs.append({"n": n, **params})
        with console.status(f"detecting communities n={n:,}"):
            for max_size in dict.fromkeys((args.max_size, 10)):
                runs.append(compare(graph, truth, max_size, args.seed, args.repeat,
                                    args.repeat if n <= 10_000 else 1))
        with console.status(f"incremental scenario n={n:,}"):
            scenarios.append({"nodes": len(graph.nodes), **scenario(graph, truth, args.seed)})
    _print(console, runs, scenarios)
    record = {"timestamp": datetime.now(UTC).isoformat(timespec="seconds"), "commit": _commit(),
              "python": platform.python_version(), "machine": platform.machine(),
              "graphs": graphs, "detection": runs, "incremental": scenarios,
              "reference": "graspologic_native.hierarchical_leiden (graspologic's Rust core)"}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    console.print(f"appended to {RESULTS}")


if __name__ == "__main__":
    main()
