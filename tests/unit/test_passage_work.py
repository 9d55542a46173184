"""Passage embedding shared between the worker thread and the thread that needs the result."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from knotwork.infra.embeddings.spans import TextSpanPassages
from knotwork.ingestion.passage_work import PassageWork


class _Recorder:
    """Embeds a text as [its length, its index among the texts]; records who embedded what."""

    def __init__(self, texts: list[str], gate: threading.Event | None = None) -> None:
        self.texts = texts
        self.by_thread: dict[str, list[str]] = {}
        self.gate = gate
        self.lock = threading.Lock()

    def __call__(self, part: list[str]) -> TextSpanPassages:
        name = threading.current_thread().name
        if self.gate is not None and name.startswith("worker"):
            self.gate.wait(5)
        with self.lock:
            self.by_thread.setdefault(name, []).extend(part)
        vectors = [[float(len(t)), float(self.texts.index(t))] for t in part]
        return TextSpanPassages(part, vectors, lambda spans: [[float(len(s)), -1.0] for s in spans])


def test_vectors_come_back_in_the_texts_order_whatever_the_parts() -> None:
    texts = [f"passage {'x' * (i * 7 % 23)} {i}" for i in range(37)]
    work = PassageWork(texts, _Recorder(texts), part_rows=5)
    vectors = work.result().vectors
    assert vectors == [[float(len(t)), float(i)] for i, t in enumerate(texts)]


def test_short_texts_follow_the_passages_embedded_by_their_own_call() -> None:
    texts = [f"passage {'x' * (i * 5 % 17)} {i}" for i in range(9)]
    short = [f"sentence {i}" for i in range(11)]
    passages, sentences = _Recorder(texts + short), _Recorder(texts + short)
    work = PassageWork(texts, passages, part_rows=4, short=short, short_embed=sentences,
                       short_rows=5)
    vectors = work.result().vectors
    assert vectors == [[float(len(t)), float(i)] for i, t in enumerate(texts + short)]
    assert sorted(t for part in passages.by_thread.values() for t in part) == sorted(texts)
    assert sorted(t for part in sentences.by_thread.values() for t in part) == sorted(short)


def test_a_span_is_read_from_the_part_that_holds_its_passage() -> None:
    texts = ["short", "a much longer passage about Atlas", "mid length one"]
    joined = PassageWork(texts, _Recorder(texts), part_rows=1).result()
    assert joined.span_vector(1, 2, 6) == [4.0, -1.0]  # "much": read from its own part


def test_the_caller_embeds_every_part_nobody_started() -> None:
    texts = [f"t{i}" for i in range(10)]
    recorder = _Recorder(texts)
    work = PassageWork(texts, recorder, part_rows=3)  # never given to a worker
    assert len(work.result().vectors) == 10
    assert sorted(recorder.by_thread[threading.current_thread().name]) == sorted(texts)
    assert work.done()


def test_while_the_worker_holds_a_part_the_caller_embeds_the_spare_batch() -> None:
    texts = [f"first {i}" for i in range(4)]
    spare_texts = [f"second {i}" for i in range(4)]
    gate = threading.Event()
    recorder = _Recorder(texts + spare_texts, gate)
    work = PassageWork(texts, recorder, part_rows=4)  # one part: the worker takes it
    spare = PassageWork(spare_texts, recorder, part_rows=2)
    with ThreadPoolExecutor(1, thread_name_prefix="worker") as pool:
        work.submit(pool)
        while not recorder.by_thread and not work._next:  # the worker has taken the part
            threading.Event().wait(0.01)
        releaser = threading.Timer(0.3, gate.set)
        releaser.start()
        vectors = work.result(spare=spare).vectors
        releaser.join()
    mine = recorder.by_thread[threading.current_thread().name]
    assert sorted(mine) == sorted(spare_texts)  # both spare parts, none of its own
    assert len(vectors) == 4 and spare.done()


def test_a_worker_error_reaches_the_caller() -> None:
    def failing(part: list[str]) -> TextSpanPassages:
        raise RuntimeError("model failed")

    work = PassageWork(["a", "b"], failing, part_rows=1)
    with ThreadPoolExecutor(1) as pool:
        work.submit(pool)
        with pytest.raises(RuntimeError, match="model failed"):
            work.result()


def test_no_texts_no_parts() -> None:
    work = PassageWork([], _Recorder([]))
    assert work.done() and work.result().vectors == []
