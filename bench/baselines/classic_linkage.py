"""Classic record linkage baseline (``recordlinkage``) for a world's resolution ground truth.

Each surface form is a record with three fields, all normalized the way the evaluator
normalizes names (``bench.quality_metrics.normalize``): the whole form, its first token
(given name) and its last token (family name). Two forms are compared with Jaro-Winkler on
each field (agreement at >= 0.85, the textbook threshold) and linked when at least two of the
three agree: recordlinkage's classic threshold-based classification, with no training data.

Two uses, both on exactly what Knotwork's own figures are computed on:

- :func:`classify_pairs`: the world's ``resolution_pairs.jsonl`` (alias pairs of one person,
  confusable and same-given-name pairs of different people) as candidate links.
- :func:`cluster_forms`: deduplication of all surface forms of the resolved mentions
  (candidates: sorted-neighbourhood on the whole form, window 9, plus blocking on the family
  name), linked pairs closed transitively; each mention then belongs to its form's cluster,
  so the mention-pair P/R/F1 is computed on the same mentions as Knotwork's.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.quality_metrics import normalize

THRESHOLD = 0.85  # Jaro-Winkler agreement per field
MIN_AGREE = 2  # of the three fields
WINDOW = 9  # sorted-neighbourhood window


def _frame(forms: Sequence[str]) -> object:
    import pandas as pd

    keys = [normalize(f) for f in forms]
    return pd.DataFrame({"full": keys,
                         "given": [k.split()[0] if k else "" for k in keys],
                         "family": [k.split()[-1] if k else "" for k in keys]})


def _linked(features: object) -> list[bool]:
    return [bool(v) for v in (features.sum(axis=1) >= MIN_AGREE)]  # type: ignore[attr-defined]


def _compare(pairs: object, frame: object) -> object:
    import recordlinkage

    cmp = recordlinkage.Compare()
    for field in ("full", "given", "family"):
        cmp.string(field, field, method="jarowinkler", threshold=THRESHOLD, label=field)
    return cmp.compute(pairs, frame)


def classify_pairs(pairs: Sequence[tuple[str, str]]) -> list[bool]:
    """Linked (True) or not for each (form a, form b), in order."""
    import pandas as pd

    if not pairs:
        return []
    forms = sorted({f for pair in pairs for f in pair})
    at = {f: i for i, f in enumerate(forms)}
    frame = _frame(forms)
    index = pd.MultiIndex.from_tuples([(at[a], at[b]) for a, b in pairs])
    features = _compare(index, frame)
    linked = dict(zip(features.index, _linked(features), strict=True))  # type: ignore[attr-defined]
    return [linked[(at[a], at[b])] for a, b in pairs]


def cluster_forms(forms: Sequence[str]) -> dict[str, int]:
    """normalized form -> cluster number, for every distinct normalized form given."""
    import recordlinkage

    keys = sorted({normalize(f) for f in forms if normalize(f)})
    if not keys:
        return {}
    frame = _frame(keys)
    indexer = recordlinkage.Index()
    indexer.sortedneighbourhood("full", window=WINDOW)
    indexer.block("family")
    parent = list(range(len(keys)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    if len(keys) > 1:
        candidates = indexer.index(frame)
        if len(candidates):
            features = _compare(candidates, frame)
            for (i, j), link in zip(features.index, _linked(features), strict=True):  # type: ignore[attr-defined]
                if link:
                    parent[find(int(i))] = find(int(j))
    return {k: find(i) for i, k in enumerate(keys)}
