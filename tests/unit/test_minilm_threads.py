"""The MiniLM embedder serialises its use of the shared model: its fast tokenizer keeps the
padding / truncation of its last call, so two threads inside it at once could tokenize one
batch with the other's settings (a 400 "Unable to create tensor" when REST clients missed the
query cache together). A fake model records how many threads are inside it at once."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from knotwork.infra.embeddings.minilm import MiniLMEmbedder


class _Inside:
    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.lock = threading.Lock()
        self.both_arrived = threading.Event()

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            if self.now >= 2:
                self.both_arrived.set()
        self.both_arrived.wait(0.5)  # without serialisation the other thread arrives meanwhile

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


class _FakeModel:
    max_seq_length = 256

    def __init__(self, inside: _Inside) -> None:
        self.inside = inside

    def tokenizer(self, texts: list[str], **_: Any) -> dict[str, list[list[int]]]:
        self.inside.enter()
        try:
            return {"input_ids": [[1] * len(t.split()) for t in texts]}
        finally:
            self.inside.leave()

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        self.inside.enter()
        try:
            return np.ones((len(texts), 384), dtype=np.float32)
        finally:
            self.inside.leave()


def test_one_thread_at_a_time_inside_the_shared_model() -> None:
    inside = _Inside()
    model = _FakeModel(inside)
    embedders = [MiniLMEmbedder(cache_size=1) for _ in range(2)]  # two instances, one model
    for embedder in embedders:
        embedder._model = model  # type: ignore[assignment]
    results: list[int] = []

    def work(embedder: MiniLMEmbedder, text: str) -> None:
        results.append(len(embedder.embed([text, text + " more words"])))

    threads = [threading.Thread(target=work, args=(e, f"question {k}"))
               for k, e in enumerate(embedders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [2, 2]
    assert inside.most == 1
