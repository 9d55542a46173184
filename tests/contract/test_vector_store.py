"""VectorStore contract: every adapter must pass every test here.

Adapters: qdrant-edge on a temp dir (the real in-process engine) and
``QdrantClient(":memory:")`` behind the server adapter. Expected neighbours are computed by
brute force with numpy, so a "passing" search is a correct one, not just a non-empty one.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from knotwork.domain.ports import Collection, PayloadValue, VectorHit, VectorPoint, VectorStore
from knotwork.infra.qdrant_edge.store import QdrantEdgeVectorStore
from knotwork.infra.qdrant_server.store import QdrantServerVectorStore
from knotwork.infra.vector_factory import create_vector_store
from knotwork.settings import Settings, VectorBackend

DIM = 32
C = Collection.CHUNKS


@dataclass
class Harness:
    name: str
    open: Callable[[], VectorStore]  # a new store over the same underlying data
    persistent: bool


@pytest.fixture(params=["qdrant_edge", "qdrant_memory"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    if request.param == "qdrant_edge":
        path = tmp_path / "qdrant"
        return Harness("qdrant_edge", lambda: QdrantEdgeVectorStore(path), persistent=True)
    return Harness(
        "qdrant_memory", lambda: QdrantServerVectorStore.from_url(":memory:"), persistent=False
    )


@pytest.fixture
def store(harness: Harness) -> Iterator[VectorStore]:
    s = harness.open()
    s.ensure_collection(C, DIM)
    yield s
    s.close()


# --------------------------------------------------------------------------- helpers


def unit_vectors(n: int, dim: int = DIM, seed: int = 7) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(n, dim))
    out: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


def near(v: np.ndarray, seed: int = 99, noise: float = 0.05) -> list[float]:
    q = v + noise * np.random.default_rng(seed).normal(size=v.shape)
    return [float(x) for x in q / np.linalg.norm(q)]


def new_ids(n: int) -> list[str]:
    return [str(uuid.UUID(int=i + 1, version=4)) for i in range(n)]


def points(
    ids: Sequence[str],
    vecs: np.ndarray,
    group: str,
    payload: Callable[[int], dict[str, PayloadValue]] | None = None,
) -> list[VectorPoint]:
    return [
        VectorPoint(
            id=ids[i],
            vector=[float(x) for x in vecs[i]],
            group_id=group,
            payload=payload(i) if payload else {"n": i},
        )
        for i in range(len(ids))
    ]


def brute_force(vecs: np.ndarray, query: Sequence[float], k: int) -> list[int]:
    q = np.asarray(query) / np.linalg.norm(query)
    scores = vecs @ q
    return [int(i) for i in np.argsort(-scores)[:k]]


def assert_well_formed(hits: list[VectorHit]) -> None:
    scores = [h.score for h in hits]
    assert all(-1.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert len({h.id for h in hits}) == len(hits)


# --------------------------------------------------------------------------- search


def test_adapters_satisfy_protocol(store: VectorStore) -> None:
    assert isinstance(store, VectorStore)


def test_nearest_neighbours_match_brute_force(store: VectorStore) -> None:
    vecs = unit_vectors(200)
    ids = new_ids(200)
    store.upsert(C, points(ids, vecs, "a"))
    query = near(vecs[17])
    hits = store.search(C, query, group_id="a", limit=10)
    assert_well_formed(hits)
    assert len(hits) == 10
    assert hits[0].id == ids[17]
    assert hits[0].payload == {"n": 17}
    assert [h.id for h in hits] == [ids[i] for i in brute_force(vecs, query, 10)]
    q = np.asarray(query)
    for h in hits:  # real cosine values, not just a ranking
        assert h.score == pytest.approx(float(vecs[ids.index(h.id)] @ q), abs=1e-4)


def test_scores_are_cosine_even_for_unnormalised_vectors(store: VectorStore) -> None:
    ids = new_ids(3)
    vecs = np.zeros((3, DIM))
    vecs[0, 0], vecs[1, 0], vecs[1, 1], vecs[2, 0] = 10.0, 3.0, 3.0, -0.5
    store.upsert(C, points(ids, vecs, "a"))
    hits = store.search(C, [2.0] + [0.0] * (DIM - 1), group_id="a", limit=3)
    assert [h.id for h in hits] == ids
    assert [h.score for h in hits] == pytest.approx([1.0, 2**-0.5, -1.0], abs=1e-5)


def test_tenant_isolation(store: VectorStore) -> None:
    vecs = unit_vectors(50)
    ids_a, ids_b = new_ids(50), [str(uuid.uuid4()) for _ in range(50)]
    store.upsert(C, points(ids_a, vecs, "a"))
    store.upsert(C, points(ids_b, vecs, "b"))  # identical vectors, other tenant
    hits = store.search(C, near(vecs[3]), group_id="a", limit=50)
    assert len(hits) == 50
    assert {h.id for h in hits} == set(ids_a)
    hits_b = store.search(C, near(vecs[3]), group_id="b", limit=5)
    assert hits_b[0].id == ids_b[3]
    assert {h.id for h in hits_b} <= set(ids_b)
    assert store.search(C, near(vecs[3]), group_id="c", limit=5) == []
    assert (store.count(C, "a"), store.count(C, "b"), store.count(C, "c")) == (50, 50, 0)


def test_exact_payload_filters(store: VectorStore) -> None:
    vecs = unit_vectors(120)
    ids = new_ids(120)
    store.upsert(
        C,
        points(ids, vecs, "a", lambda i: {"document_id": f"doc-{i % 4}", "kind": f"k{i % 3}"}),
    )
    query = near(vecs[5])  # 5 -> doc-1, k2
    hits = store.search(C, query, group_id="a", limit=100, filters={"document_id": "doc-1"})
    assert len(hits) == 30
    assert all(h.payload["document_id"] == "doc-1" for h in hits)
    assert hits[0].id == ids[5]
    both = store.search(
        C, query, group_id="a", limit=100, filters={"document_id": "doc-1", "kind": "k2"}
    )
    expected = [i for i in range(120) if i % 4 == 1 and i % 3 == 2]
    assert {h.id for h in both} == {ids[i] for i in expected}
    order = brute_force(vecs[expected], query, len(expected))
    assert [h.id for h in both] == [ids[expected[j]] for j in order]
    assert store.search(C, query, group_id="a", filters={"document_id": "doc-1-"}) == []
    assert store.search(C, query, group_id="a", filters={"document_id": "DOC-1"}) == []
    assert store.search(C, query, group_id="a", filters={"missing": "x"}) == []


def test_min_score(store: VectorStore) -> None:
    vecs = unit_vectors(100)
    ids = new_ids(100)
    store.upsert(C, points(ids, vecs, "a"))
    query = near(vecs[0])
    everything = store.search(C, query, group_id="a", limit=100)
    assert len(everything) == 100
    threshold = (everything[4].score + everything[5].score) / 2
    hits = store.search(C, query, group_id="a", limit=100, min_score=threshold)
    assert [h.id for h in hits] == [h.id for h in everything[:5]]
    assert all(h.score >= threshold for h in hits)
    assert all(h.score >= 0.999 for h in store.search(C, query, group_id="a", min_score=0.999))
    assert store.search(C, [-x for x in vecs[0]], group_id="a", min_score=0.99) == []
    assert len(store.search(C, query, group_id="a", limit=100, min_score=-1.0)) == 100


def test_limit(store: VectorStore) -> None:
    vecs = unit_vectors(20)
    store.upsert(C, points(new_ids(20), vecs, "a"))
    assert len(store.search(C, near(vecs[0]), group_id="a", limit=3)) == 3
    assert len(store.search(C, near(vecs[0]), group_id="a")) == 10
    assert len(store.search(C, near(vecs[0]), group_id="a", limit=50)) == 20


# --------------------------------------------------------------------------- writes


def test_upsert_is_idempotent_and_updates(store: VectorStore) -> None:
    vecs = unit_vectors(2)
    pid = new_ids(1)[0]
    store.upsert(C, [VectorPoint(id=pid, vector=list(vecs[0]), group_id="a", payload={"v": 1})])
    store.upsert(C, [VectorPoint(id=pid, vector=list(vecs[0]), group_id="a", payload={"v": 1})])
    assert store.count(C, "a") == 1
    store.upsert(C, [VectorPoint(id=pid, vector=list(vecs[1]), group_id="a", payload={"v": 2})])
    assert store.count(C, "a") == 1
    (hit,) = store.search(C, list(vecs[1]), group_id="a")
    assert hit.id == pid
    assert hit.payload == {"v": 2}  # payload replaced, not merged
    assert hit.score == pytest.approx(1.0, abs=1e-5)  # vector replaced too


def test_delete_by_ids(store: VectorStore) -> None:
    vecs = unit_vectors(5)
    ids = new_ids(5)
    store.upsert(C, points(ids, vecs, "a"))
    store.delete(C, [ids[1], ids[3], str(uuid.uuid4())])  # unknown ids are ignored
    store.delete(C, [])
    assert store.count(C, "a") == 3
    hits = store.search(C, list(vecs[1]), group_id="a", limit=10)
    assert {h.id for h in hits} == {ids[0], ids[2], ids[4]}


def test_delete_group(store: VectorStore) -> None:
    vecs = unit_vectors(30)
    store.upsert(C, points(new_ids(30), vecs, "a"))
    ids_b = [str(uuid.uuid4()) for _ in range(10)]
    store.upsert(C, points(ids_b, vecs[:10], "b"))
    store.delete_group(C, "a")
    store.delete_group(C, "nobody")
    assert store.count(C, "a") == 0
    assert store.search(C, list(vecs[0]), group_id="a") == []
    assert store.count(C, "b") == 10
    assert store.search(C, list(vecs[0]), group_id="b", limit=1)[0].id == ids_b[0]


def test_scan_returns_every_point_of_one_tenant_with_vectors(store: VectorStore) -> None:
    vecs = unit_vectors(23)
    ids = new_ids(23)
    store.upsert(C, [VectorPoint(id=i, vector=list(v), group_id="a", payload={"n": k})
                     for k, (i, v) in enumerate(zip(ids, vecs, strict=True))])
    store.upsert(C, points([str(uuid.uuid4()) for _ in range(4)], vecs[:4], "b"))
    scanned = list(store.scan(C, "a", batch=5))  # several pages
    assert sorted(p.id for p in scanned) == sorted(ids)
    by_id = {p.id: p for p in scanned}
    for k, (pid, vec) in enumerate(zip(ids, vecs, strict=True)):
        assert by_id[pid].group_id == "a" and by_id[pid].payload == {"n": k}
        assert by_id[pid].vector == pytest.approx(list(vec), abs=1e-5)
    assert list(store.scan(C, "nobody")) == []
    ids_only = list(store.scan(C, "a", batch=7, with_vectors=False))
    assert sorted(p.id for p in ids_only) == sorted(ids) and all(p.vector == [] for p in ids_only)
    # a scanned point written back is the same point (export/import round trip)
    store.delete_group(C, "a")
    store.upsert(C, scanned)
    again = {p.id: p for p in store.scan(C, "a")}
    assert again.keys() == by_id.keys()
    assert all(again[i].vector == pytest.approx(by_id[i].vector, abs=1e-6) for i in again)


def test_vectors_of_reads_stored_vectors_by_id_within_one_tenant(store: VectorStore) -> None:
    """Entity resolution reads candidates' stored vectors in one call (issue 5)."""
    vecs = unit_vectors(6)
    ids = new_ids(6)
    store.upsert(C, points(ids[:4], vecs[:4], "a"))
    store.upsert(C, points(ids[4:], vecs[4:], "b"))
    vectors_of = store.vectors_of  # a port method (issue 23): local search reads by id
    missing = str(uuid.uuid4())
    found = vectors_of(C, "a", [ids[0], ids[3], ids[4], missing])
    assert sorted(found) == sorted([ids[0], ids[3]])  # other tenant and unknown ids left out
    assert found[ids[3]] == pytest.approx(list(vecs[3]), abs=1e-5)
    assert vectors_of(C, "a", []) == {}


def test_an_id_only_collection_reads_deletes_and_survives_index_builds(harness: Harness
                                                                        ) -> None:
    """``Collection.SENTENCES`` has no HNSW graph (m=0): it is read by id, written, deleted
    and scanned like any other, and an index build leaves it readable."""
    from knotwork.infra.vector_factory import build_due_indexes

    store = harness.open()
    try:
        store.ensure_collection(Collection.SENTENCES, DIM)
        vecs = unit_vectors(40)
        ids = new_ids(40)
        store.upsert(Collection.SENTENCES, points(ids, vecs, "a"))
        build_due_indexes(store)
        found = store.vectors_of(Collection.SENTENCES, "a", ids[:3])
        assert found[ids[2]] == pytest.approx(list(vecs[2]), abs=1e-5)
        store.delete(Collection.SENTENCES, ids[:20])
        assert store.count(Collection.SENTENCES, "a") == 20
        assert store.vectors_of(Collection.SENTENCES, "a", ids[:3]) == {}
        assert len(list(store.scan(Collection.SENTENCES, "a", with_vectors=False))) == 20
    finally:
        store.close()


def test_payload_types_round_trip(store: VectorStore) -> None:
    payload: dict[str, PayloadValue] = {
        "s": "x",
        "unicode": "Zürich — ✓",
        "empty_s": "",
        "i": 42,
        "neg": -7,
        "big": 2**53,
        "zero": 0,
        "f": 0.25,
        "f_whole": 2.0,
        "b": True,
        "b_false": False,
        "l": ["a", "b"],
        "l_empty": [],
        "n": None,
    }
    vec = list(unit_vectors(1)[0])
    store.upsert(C, [VectorPoint(id=new_ids(1)[0], vector=vec, group_id="a", payload=payload)])
    (hit,) = store.search(C, vec, group_id="a")
    assert hit.payload == payload
    assert "group_id" not in hit.payload  # documented: the tenant key is not returned
    for key, value in payload.items():
        assert type(hit.payload[key]) is type(value), key
    store.upsert(C, [VectorPoint(id=new_ids(2)[1], vector=vec, group_id="b")])
    assert store.search(C, vec, group_id="b")[0].payload == {}


def test_payload_with_matching_group_id_is_accepted_and_mismatch_rejected(
    store: VectorStore,
) -> None:
    vec = list(unit_vectors(1)[0])
    pid = new_ids(1)[0]
    store.upsert(C, [VectorPoint(id=pid, vector=vec, group_id="a", payload={"group_id": "a"})])
    assert store.count(C, "a") == 1
    with pytest.raises(ValueError, match="group_id"):
        store.upsert(C, [VectorPoint(id=pid, vector=vec, group_id="a", payload={"group_id": "b"})])
    assert store.count(C, "b") == 0


def test_ids_must_be_uuids(store: VectorStore) -> None:
    vec = list(unit_vectors(1)[0])
    with pytest.raises(ValueError, match="UUID"):
        store.upsert(C, [VectorPoint(id="entity-1", vector=vec, group_id="a")])
    upper = str(uuid.uuid4()).upper()
    store.upsert(C, [VectorPoint(id=upper, vector=vec, group_id="a")])
    assert store.search(C, vec, group_id="a")[0].id == upper.lower()  # canonical form
    store.delete(C, [upper])
    assert store.count(C, "a") == 0


# --------------------------------------------------------------------------- collections


def test_ensure_collection_idempotent_and_dimension_checked(store: VectorStore) -> None:
    vecs = unit_vectors(3)
    store.upsert(C, points(new_ids(3), vecs, "a"))
    store.ensure_collection(C, DIM)  # again: no error, data kept
    assert store.count(C, "a") == 3
    with pytest.raises(ValueError, match="dimension"):
        store.ensure_collection(C, DIM + 1)
    with pytest.raises(ValueError):
        store.ensure_collection(Collection.FACTS, 0)


def test_wrong_dimension_is_rejected_before_writing(store: VectorStore) -> None:
    good = list(unit_vectors(1)[0])
    batch = [
        VectorPoint(id=str(uuid.uuid4()), vector=good, group_id="a"),
        VectorPoint(id=str(uuid.uuid4()), vector=good[:-1], group_id="a"),
    ]
    with pytest.raises(ValueError, match=rf"dimension {DIM - 1}.*dimension {DIM}"):
        store.upsert(C, batch)
    assert store.count(C, "a") == 0  # nothing of the batch was written
    with pytest.raises(ValueError, match="dimension"):
        store.search(C, good + [0.0], group_id="a")


def test_collections_are_independent(store: VectorStore) -> None:
    vec = list(unit_vectors(1)[0])
    pid = new_ids(1)[0]
    store.ensure_collection(Collection.ENTITIES, 8)
    store.ensure_collection(Collection.COMMUNITIES, DIM)
    store.upsert(C, [VectorPoint(id=pid, vector=vec, group_id="a", payload={"c": "chunk"})])
    store.upsert(
        Collection.COMMUNITIES,
        [VectorPoint(id=pid, vector=vec, group_id="a", payload={"level": 1})],
    )
    assert store.search(Collection.COMMUNITIES, vec, group_id="a")[0].payload == {"level": 1}
    store.delete_group(Collection.COMMUNITIES, "a")
    assert store.count(C, "a") == 1
    assert store.count(Collection.ENTITIES, "a") == 0
    assert store.search(Collection.ENTITIES, [1.0] * 8, group_id="a") == []


def test_missing_collection(harness: Harness) -> None:
    s = harness.open()
    try:
        vec = list(unit_vectors(1)[0])
        assert s.search(Collection.FACTS, vec, group_id="a") == []
        assert s.count(Collection.FACTS, "a") == 0
        s.delete(Collection.FACTS, [str(uuid.uuid4())])
        s.delete_group(Collection.FACTS, "a")
        with pytest.raises(ValueError, match="ensure_collection"):
            s.upsert(Collection.FACTS, [VectorPoint(id=new_ids(1)[0], vector=vec, group_id="a")])
        s.upsert(Collection.FACTS, [])  # an empty batch is always fine
    finally:
        s.close()


def test_5000_points_filtered_search(store: VectorStore) -> None:
    n, dim = 5000, 64
    col = Collection.ENTITIES
    store.ensure_collection(col, dim)
    vecs = unit_vectors(n, dim, seed=3)
    ids = [str(uuid.uuid4()) for _ in range(n)]
    groups = [f"g{i % 4}" for i in range(n)]
    types = [f"t{i % 10}" for i in range(n)]
    pts = [
        VectorPoint(
            id=ids[i],
            vector=[float(x) for x in vecs[i]],
            group_id=groups[i],
            payload={"entity_type": types[i], "confidence": 0.5, "entity_id": ids[i]},
        )
        for i in range(n)
    ]
    store.upsert(col, pts)
    assert [store.count(col, f"g{g}") for g in range(4)] == [1250] * 4
    for target in (1, 2222, 4999):  # g1/t1, g2/t2, g3/t9
        query = near(vecs[target], seed=target, noise=0.05)
        hits = store.search(
            col,
            query,
            group_id=groups[target],
            limit=10,
            filters={"entity_type": types[target]},
        )
        assert_well_formed(hits)
        eligible = [
            i for i in range(n) if groups[i] == groups[target] and types[i] == types[target]
        ]
        expected = [ids[eligible[j]] for j in brute_force(vecs[eligible], query, 10)]
        assert [h.id for h in hits] == expected
        assert hits[0].id == ids[target]
        assert all(h.payload["entity_type"] == types[target] for h in hits)


def test_concurrent_use_from_worker_threads(store: VectorStore) -> None:
    """Async callers run store methods in worker threads: writes and reads may interleave."""
    vecs = unit_vectors(400, seed=11)

    def work(k: int) -> int:
        ids = [str(uuid.uuid4()) for _ in range(100)]
        for start in range(0, 100, 20):
            store.upsert(C, points(ids[start : start + 20], vecs[k * 100 + start :], f"t{k}"))
            store.search(C, list(vecs[k * 100]), group_id=f"t{k}", limit=5)
            store.count(C, f"t{k}")
        return store.count(C, f"t{k}")

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(work, range(4))) == [100] * 4


# --------------------------------------------------------------------------- persistence


def test_close_and_reopen(harness: Harness) -> None:
    if not harness.persistent:
        pytest.skip(f"{harness.name} keeps no state across instances")
    vecs = unit_vectors(40)
    ids = new_ids(40)
    s = harness.open()
    s.ensure_collection(C, DIM)
    s.upsert(C, points(ids, vecs, "a", lambda i: {"n": i, "tags": ["x"]}))
    s.delete(C, [ids[0]])
    before = s.search(C, near(vecs[9]), group_id="a", limit=5)
    s.close()
    s.close()  # idempotent
    with pytest.raises(RuntimeError):
        s.count(C, "a")
    again = harness.open()
    try:
        assert again.count(C, "a") == 39
        assert again.search(C, near(vecs[9]), group_id="a", limit=5) == before
        with pytest.raises(ValueError, match="dimension"):
            again.ensure_collection(C, DIM * 2)
        again.ensure_collection(C, DIM)
        again.upsert(C, points(ids[:1], vecs, "a"))
        assert again.count(C, "a") == 40
    finally:
        again.close()


_CHILD = """
import json, os, sys
from pathlib import Path
from knotwork.domain.ports import Collection, VectorPoint
from knotwork.infra.qdrant_edge.store import QdrantEdgeVectorStore
path, pid, vec, mode = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
s = QdrantEdgeVectorStore(path)
if mode == "write":
    s.ensure_collection(Collection.CHUNKS, len(vec))
    s.upsert(Collection.CHUNKS, [VectorPoint(id=pid, vector=vec, group_id="a",
                                             payload={"mode": "closed"})])
    s.close()
elif mode == "crash":
    s.upsert(Collection.CHUNKS, [VectorPoint(id=pid, vector=vec, group_id="a",
                                             payload={"mode": "crashed"})])
    os._exit(0)  # no close, no atexit
else:
    hits = s.search(Collection.CHUNKS, vec, group_id="a", limit=10)
    print(json.dumps(sorted(h.payload["mode"] for h in hits)))
    s.close()
"""


def test_edge_data_is_visible_to_a_new_process(tmp_path: Path) -> None:
    path = str(tmp_path / "qdrant")
    vec = json.dumps([float(x) for x in unit_vectors(1)[0]])

    def child(pid: str, mode: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, path, pid, vec, mode],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    child(str(uuid.uuid4()), "write")
    child(str(uuid.uuid4()), "crash")
    assert json.loads(child(str(uuid.uuid4()), "read")) == ["closed", "crashed"]


# --------------------------------------------------------------------------- factory / layout


def test_factory(tmp_path: Path) -> None:
    edge = create_vector_store(
        Settings(vector_backend=VectorBackend.QDRANT_EDGE, data_dir=tmp_path)
    )
    assert isinstance(edge, QdrantEdgeVectorStore)
    assert edge.path == tmp_path / "qdrant"
    assert not edge.path.exists()  # nothing happens until a collection is used
    edge.close()
    server = create_vector_store(
        Settings(vector_backend=VectorBackend.QDRANT, qdrant_url=":memory:")
    )
    assert isinstance(server, QdrantServerVectorStore)
    server.ensure_collection(C, 4)
    assert server.count(C, "a") == 0
    server.close()
    with pytest.raises(ValueError, match="QDRANT_URL"):
        create_vector_store(Settings(vector_backend=VectorBackend.QDRANT, qdrant_url=None))


def test_edge_layout_follows_design(tmp_path: Path) -> None:
    s = QdrantEdgeVectorStore(tmp_path)
    for col in Collection:
        s.ensure_collection(col, 8)
    s.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(c.value for c in Collection)
    hnsw = {
        c: json.loads((tmp_path / c.value / "edge_config.json").read_text())["hnsw_config"]
        for c in Collection
    }
    assert (hnsw[Collection.ENTITIES]["m"], hnsw[Collection.ENTITIES]["ef_construct"]) == (16, 200)
    assert (hnsw[Collection.COMMUNITIES]["m"], hnsw[Collection.COMMUNITIES]["ef_construct"]) == (
        12,
        100,
    )


def test_server_layout_follows_design() -> None:
    from qdrant_client import QdrantClient

    calls: dict[str, dict[str, Any]] = {}
    indexes: dict[str, dict[str, Any]] = {}

    class Spy(QdrantClient):
        def create_collection(self, collection_name: str, **kw: Any) -> bool:  # type: ignore[override]
            calls[collection_name] = kw
            return super().create_collection(collection_name, **kw)

        def create_payload_index(self, collection_name: str, **kw: Any) -> Any:  # type: ignore[override]
            indexes.setdefault(collection_name, {})[kw["field_name"]] = kw["field_schema"]
            return super().create_payload_index(collection_name, **kw)

    s = QdrantServerVectorStore(Spy(":memory:"), collection_prefix="kw_", shards=3, replicas=2)
    for col in Collection:
        s.ensure_collection(col, 8)
    s.close()
    assert {(kw["shard_number"], kw["replication_factor"]) for kw in calls.values()} == {(3, 2)}
    ent, com = calls["kw_entities"]["hnsw_config"], calls["kw_communities"]["hnsw_config"]
    assert (ent.m, ent.ef_construct, com.m, com.ef_construct) == (16, 200, 12, 100)
    assert calls["kw_chunks"]["vectors_config"].distance.value == "Cosine"
    assert indexes["kw_entities"]["group_id"].is_tenant is True
    assert set(indexes["kw_entities"]) == {"group_id", "entity_type", "confidence", "entity_id"}
    assert set(indexes["kw_chunks"]) == {"group_id", "document_id", "source_system"}
    assert set(indexes["kw_communities"]) == {"group_id", "level", "entity_count"}
