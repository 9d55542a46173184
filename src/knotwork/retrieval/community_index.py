"""An in-process index of a tenant's communities, so a global query never scores them all.

Built once per community build (keyed by the build record and the graph store object, so an
ACL-restricted view never shares the index of the full graph) and reused by every query:

- the hierarchy (level and parent of each community) and the partition of each level;
- an inverted index of each community's text (title, topics, summary) that gives exactly the
  scores of :func:`knotwork.retrieval.lexical.bm25_scores` over all communities, computed only
  for the communities sharing a term with the question (sparse BM25).

The index may lag incremental upkeep and summary refreshes (same build) by ``ttl`` seconds
(then it is reloaded in the background while still serving);
it only ranks: the communities chosen as candidate sources are read fresh from the graph.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import structlog

from knotwork.communities.report import partition
from knotwork.domain.models import Community, CommunityState
from knotwork.observability.tracing import unwrap
from knotwork.retrieval.global_rank import community_text
from knotwork.retrieval.lexical import terms

_K1, _B = 1.2, 0.75
log = structlog.get_logger(__name__)


@dataclass
class CommunityIndex:
    """The communities of one tenant at one build, with sparse BM25 over their texts."""

    communities: list[Community]
    fingerprint: tuple[str, ...] = ()
    loaded_at: float = 0.0
    by_id: dict[str, Community] = field(init=False)
    levels: list[int] = field(init=False)
    members: dict[int, frozenset[str]] = field(init=False)
    _postings: dict[str, list[tuple[int, int]]] = field(init=False)
    _lengths: list[int] = field(init=False)
    _unique: list[int] = field(init=False)
    _avg: float = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {c.id: c for c in self.communities}
        self.levels = sorted({c.level for c in self.communities})
        self.members = {lvl: frozenset(c.id for c in partition(self.communities, lvl))
                        for lvl in self.levels}
        self._postings = {}
        self._lengths = []
        self._unique = []
        for i, community in enumerate(self.communities):
            words = terms(community_text(community))
            self._lengths.append(len(words))
            counts = Counter(words)
            self._unique.append(len(counts))
            for word, tf in counts.items():
                self._postings.setdefault(word, []).append((i, tf))
        n = len(self.communities)
        self._avg = (sum(self._lengths) / n if n else 0.0) or 1.0

    @property
    def max_level(self) -> int:
        return self.levels[-1] if self.levels else 0

    def bm25(self, query: str) -> dict[str, float]:
        """Community id -> the score ``bm25_scores(query, all community texts)`` would give;
        communities sharing no term with the query (score 0) are left out."""
        q = set(terms(query))
        n = len(self.communities)
        if not q or not n:
            return {}
        raw: dict[int, float] = {}
        shared: dict[int, int] = {}
        for word in q:
            postings = self._postings.get(word, [])
            if not postings:
                continue
            df = len(postings)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for i, tf in postings:
                norm = tf + _K1 * (1 - _B + _B * self._lengths[i] / self._avg)
                raw[i] = raw.get(i, 0.0) + idf * tf * (_K1 + 1) / norm
                shared[i] = shared.get(i, 0) + 1
        top = max(raw.values(), default=0.0)
        if top <= 0:
            return {}
        return {self.communities[i].id: 0.5 * (s / top) + 0.5 * shared[i] / len(q)
                for i, s in raw.items()}

    def level_fit(self, relevance: Mapping[str, float], level: int, top: int) -> float:
        """Mean relevance of the ``top`` best communities of the level's partition (as
        :func:`knotwork.retrieval.global_rank.level_fit`, over the scored ones only)."""
        members = self.members.get(level, frozenset())
        if not members:
            return 0.0
        top = max(1, top)
        best = sorted((s for cid, s in relevance.items() if cid in members), reverse=True)[:top]
        best += [0.0] * (min(top, len(members)) - len(best))
        return sum(best) / len(best)


def fingerprint(state: CommunityState) -> tuple[str, ...]:
    """The build the index belongs to. Incremental upkeep (new members, stale summaries) moves
    ``updated_at`` on every ingested batch but never adds a community or changes the
    hierarchy: reloading then would cost a full read per batch for a ranking-only lag."""
    return (state.built_at.isoformat(), str(state.community_count), str(state.levels))


_INDEXES: weakref.WeakKeyDictionary[object, dict[str, CommunityIndex]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def community_index(graph: object, group_id: str, state: CommunityState,
                    load: Callable[[], Sequence[Community]], ttl: float) -> CommunityIndex:
    """The tenant's index for this build: reused while the build record is unchanged; older
    than ``ttl`` seconds it is still served while a background thread reloads it. Another
    build (or none held) loads synchronously from ``load()``."""
    graph = unwrap(graph)  # the tracing wrapper is not weak-referenceable; the store is
    key = fingerprint(state)
    with _LOCK:
        try:
            held = _INDEXES.get(graph, {}).get(group_id)
        except TypeError:  # not weak-referenceable: no reuse
            held = None
    if held is not None and held.fingerprint == key:
        if time.monotonic() - held.loaded_at >= ttl:
            _reload_in_background(graph, group_id, key, load)
        return held
    return _store(graph, group_id, CommunityIndex(list(load()), fingerprint=key,
                                                  loaded_at=time.monotonic()))


_RELOADING: set[tuple[int, str]] = set()


def _store(graph: object, group_id: str, index: CommunityIndex) -> CommunityIndex:
    with _LOCK:
        try:
            _INDEXES.setdefault(graph, {})[group_id] = index
        except TypeError:
            pass
    return index


def _reload_in_background(graph: object, group_id: str, key: tuple[str, ...],
                          load: Callable[[], Sequence[Community]]) -> None:
    token = (id(graph), group_id)
    with _LOCK:
        if token in _RELOADING:
            return
        _RELOADING.add(token)

    def run() -> None:
        try:
            _store(graph, group_id, CommunityIndex(list(load()), fingerprint=key,
                                                   loaded_at=time.monotonic()))
        except Exception as exc:  # noqa: BLE001 - the held index keeps serving
            log.warning("communities.index_reload_failed", group=group_id, error=str(exc))
        finally:
            with _LOCK:
                _RELOADING.discard(token)

    threading.Thread(target=run, name=f"community-index-{group_id}", daemon=True).start()
