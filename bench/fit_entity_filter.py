"""Fit the weak-entity filter (knotwork.ingestion.extraction.entity_filter) on one corpus and
report it on another.

    python -m bench.fit_entity_filter FIT_CORPUS REPORT_CORPUS [REPORT_CORPUS ...] [--rows DIR]

Each corpus directory has confluence/, slack/ and truth/entities.json (the development corpora
format). The corpus is ingested in process into a temporary data dir with the filter off; every
chunk entity with only weak votes is recorded with its features and labelled by whether its
name or an alias is a gold entity's name or alias. A logistic regression is fitted on the first
corpus; for each corpus the share of weak junk dropped and of weak gold entities dropped at
the threshold is printed, for the weights in use and for the new fit, then the new weights to
paste into ``entity_filter.WEIGHTS``. ``--rows DIR`` keeps each corpus's collected rows there
(``<corpus>.json``) and reads them back on the next run instead of ingesting again (delete the
file after changing :func:`entity_filter.features`).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from knotwork.ingestion.extraction import entity_filter
from knotwork.ingestion.extraction.types import LocalEntity
from knotwork.resolution.normalize import normalize_name

Row = tuple[list[float], str, bool]


def _gold_forms(corpus: Path) -> set[str]:
    truth = json.loads((corpus / "truth" / "entities.json").read_text())
    return {normalize_name(f) for t in truth for f in [t["canonical_name"], *t.get("aliases", [])]}


def collect(corpus: Path) -> list[Row]:
    from knotwork.core import Knotwork
    from knotwork.settings import Settings

    rows: list[Row] = []
    gold = _gold_forms(corpus)

    def record(entities: list[LocalEntity], text: str, is_word: entity_filter.WordTest) -> set[int]:
        for ent in entities:
            if entity_filter.is_weak(ent):
                names = {normalize_name(n) for n in [ent.name, *ent.aliases]}
                rows.append((entity_filter.features(ent, text, is_word), ent.name, bool(names & gold)))
        return set()

    entity_filter.junk = record  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="kw-fit-") as tmp, \
            Knotwork(Settings(data_dir=Path(tmp), consolidate_after_ingest=False)) as kw:
        for part in ("confluence", "slack"):
            if (corpus / part).exists():
                kw.ingest_path(corpus / part)
    return rows


def report(name: str, rows: list[Row], weights: dict[str, float],
           threshold: float = entity_filter.KEEP_THRESHOLD, verbose: bool = False) -> None:
    junk = [r for r in rows if not r[2]]
    gold = [r for r in rows if r[2]]
    drop = [entity_filter.keep_probability(r[0], weights) < threshold for r in rows]
    if verbose:
        print("  gold dropped:", sorted({r[1] for d, r in zip(drop, rows, strict=True) if d and r[2]}))
        print("  other kept:", sorted({r[1] for d, r in zip(drop, rows, strict=True) if not d and not r[2]}))
    junk_dropped = sum(d for d, r in zip(drop, rows, strict=True) if not r[2])
    gold_dropped = sum(d for d, r in zip(drop, rows, strict=True) if r[2])
    print(f"{name} @{threshold}: weak chunk entities {len(rows)} (gold {len(gold)}, other {len(junk)}); "
          f"dropped: other {junk_dropped}/{len(junk)} = {junk_dropped / max(len(junk), 1):.2f}, "
          f"gold {gold_dropped}/{len(gold)} = {gold_dropped / max(len(gold), 1):.2f}")


def _rows(corpus: Path, cache: Path | None) -> list[Row]:
    path = cache / f"{corpus.name}.json" if cache is not None else None
    if path is not None and path.exists():
        return [(list(v), str(n), bool(g)) for v, n, g in json.loads(path.read_text())]
    rows = collect(corpus)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rows))
    return rows


def rows_option(argv: list[str]) -> tuple[Path | None, list[str]]:
    """``--rows FILE`` (the cache of computed rows), taken out of ``argv``."""
    if "--rows" not in argv:
        return None, argv
    at = argv.index("--rows")
    return Path(argv[at + 1]), argv[:at] + argv[at + 2:]


def main(argv: list[str]) -> int:
    from sklearn.linear_model import LogisticRegression

    cache, argv = rows_option(argv)
    corpora = [Path(a) for a in argv]
    data = {c.name: _rows(c, cache) for c in corpora}
    for name, rows in data.items():
        report(name + " (weights in use)", rows, entity_filter.WEIGHTS)
    fit = data[corpora[0].name]
    x = np.array([r[0] for r in fit])
    y = np.array([r[2] for r in fit])
    model = LogisticRegression(C=1.0, max_iter=2000).fit(x, y)
    weights = dict(zip(entity_filter.FEATURES, (round(float(w), 3) for w in model.coef_[0]),
                       strict=True))
    weights["bias"] = round(float(model.intercept_[0]), 3)
    for name, rows in data.items():
        for t in (0.2, 0.3, 0.4, 0.5):
            report(name + (" (fitted)" if name == corpora[0].name else ""), rows, weights, t,
                   verbose=t == entity_filter.KEEP_THRESHOLD and name != corpora[0].name)
    print("WEIGHTS =", json.dumps(weights, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
