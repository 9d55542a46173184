"""Fit the graph-level salience model (knotwork.resolution.salience) on one corpus's graph and
report it on another's.

    python -m bench.fit_salience FIT_CORPUS:DATA_DIR REPORT_CORPUS:DATA_DIR [...] [--rows FILE]

Each DATA_DIR is a data dir the corpus was ingested into with the pass off (for instance an
evaluation's ``--keep`` dir from before the pass existed; copy it first, it is opened
read-write). Every unprotected entity (``salience.protected``) is recorded with its features
and labelled by whether its name or an alias is a gold entity's name or alias (the corpus's
truth/entities.json). A logistic regression is fitted on the first corpus; for each corpus
and threshold it prints how many unprotected entities are not gold and how many of them the
model retires, how many gold-named ones it retires, and which gold entities would then have
no graph entity left; then the weights to paste into ``salience.WEIGHTS``.

Reported at the threshold in use, fitted on corvane (formal voice) and reported on tinlantern
(casual voice), on graphs of the session-15 baseline: see ``salience.WEIGHTS``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from bench.fit_entity_filter import rows_option
from knotwork.resolution import salience
from knotwork.resolution.normalize import normalize_name

Row = tuple[list[float], str, list[str]]  # features, name, gold ids its names carry


def _gold(corpus: Path) -> dict[str, set[str]]:
    truth = json.loads((corpus / "truth" / "entities.json").read_text())
    out: dict[str, set[str]] = {}
    for t in truth:
        for f in [t["canonical_name"], *t.get("aliases", [])]:
            out.setdefault(normalize_name(f), set()).add(t["id"])
    return out


def collect(corpus: Path, data_dir: Path) -> tuple[list[Row], dict[str, int]]:
    """The unprotected entities' rows, and per gold id how many protected entities carry it."""
    from knotwork.core import Knotwork
    from knotwork.settings import Settings

    gold = _gold(corpus)
    rows: list[Row] = []
    kept: dict[str, int] = {}
    with Knotwork(Settings(data_dir=data_dir)) as kw:
        rt = kw.runtime
        group = kw._group(None)
        entities = rt.graph.list_entities(group)
        evidence = salience.gather(rt, group, entities, rt.graph.list_facts(group))
        is_word = rt.extractor.is_common_word
        for e in entities:
            ids = sorted({g for n in [e.name, *e.aliases] for g in gold.get(normalize_name(n), ())})
            ev = evidence[e.id]
            if salience.protected(e, ev):
                for g in ids:
                    kept[g] = kept.get(g, 0) + 1
                continue
            rows.append((salience.features(e, ev, is_word), e.name, ids))
    return rows, kept


def report(name: str, rows: list[Row], kept: dict[str, int], weights: dict[str, float],
           threshold: float, verbose: bool = False) -> None:
    drop = [salience.keep_probability(r[0], weights) < threshold for r in rows]
    other = [r for r in rows if not r[2]]
    other_dropped = sum(d for d, r in zip(drop, rows, strict=True) if not r[2])
    gold_dropped = sum(d for d, r in zip(drop, rows, strict=True) if r[2])
    left = dict(kept)
    for d, r in zip(drop, rows, strict=True):
        if not d:
            for g in r[2]:
                left[g] = left.get(g, 0) + 1
    lost = sorted({g for r in rows for g in r[2]} - set(left))
    print(f"{name} @{threshold}: unprotected {len(rows)} (gold-named {len(rows) - len(other)}, "
          f"other {len(other)}); retired: other {other_dropped}, gold-named {gold_dropped}; "
          f"gold entities left with none: {len(lost)} {lost}")
    if verbose:
        print("  retired gold-named:", sorted(r[1] for d, r in zip(drop, rows, strict=True) if d and r[2]))
        print("  kept other:", sorted(r[1] for d, r in zip(drop, rows, strict=True) if not d and not r[2]))


def main(argv: list[str]) -> int:
    from sklearn.linear_model import LogisticRegression

    cache, argv = rows_option(argv)
    pairs = [(Path(a.split(":", 1)[0]), Path(a.split(":", 1)[1])) for a in argv]
    stored = json.loads(cache.read_text()) if cache is not None and cache.exists() else {}
    data: dict[str, tuple[list[Row], dict[str, int]]] = {}
    for corpus, data_dir in pairs:
        if corpus.name in stored:
            rows, kept = stored[corpus.name]
            data[corpus.name] = ([(list(v), str(n), list(g)) for v, n, g in rows], dict(kept))
        else:
            data[corpus.name] = collect(corpus, data_dir)
    if cache is not None:
        cache.write_text(json.dumps(data))
    fit_name = pairs[0][0].name
    for name, (rows, kept) in data.items():
        report(name + " (weights in use)", rows, kept, salience.WEIGHTS, salience.KEEP_THRESHOLD)
    x = np.array([r[0] for r in data[fit_name][0]])
    y = np.array([bool(r[2]) for r in data[fit_name][0]])
    model = LogisticRegression(C=1.0, max_iter=2000).fit(x, y)
    weights = dict(zip(salience.FEATURES, (round(float(w), 3) for w in model.coef_[0]), strict=True))
    weights["bias"] = round(float(model.intercept_[0]), 3)
    for name, (rows, kept) in data.items():
        for t in (0.2, 0.3, 0.4, 0.5):
            report(name + (" (fitted)" if name == fit_name else ""), rows, kept, weights, t,
                   verbose=t == salience.KEEP_THRESHOLD)
    print("WEIGHTS =", json.dumps(weights, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
