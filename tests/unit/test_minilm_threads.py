"""The MiniLM embedder serialises its use of the shared tokenizer, and only that: the Rust
tokenizer is one object every embedder shares (configured once, then only read; the lock is
cheap insurance against a second caller inside it), while the transformer only reads its
weights and runs in two threads at once (ingestion's passages beside a query's texts). A
fake model records how many threads are inside each part at once."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import torch

from knotwork.infra.embeddings.minilm import MiniLMEmbedder
from knotwork.infra.embeddings.minilm_model import Encoder, WordPieces


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


def _tokenizer(inside: _Inside) -> WordPieces:
    """The real tokenizer wrapper around a fake Rust tokenizer that records who is inside."""

    class _Rust:
        def encode_batch(self, texts: list[str]) -> list[SimpleNamespace]:
            inside.enter()
            try:
                return [SimpleNamespace(ids=[1] * len(t.split()), offsets=[]) for t in texts]
            finally:
                inside.leave()

    pieces = WordPieces.__new__(WordPieces)
    pieces._tokenizer = _Rust()  # type: ignore[assignment]
    pieces._pad = 0
    pieces._lock = threading.Lock()
    return pieces


class _FakeTransformer:
    def __init__(self, inside: _Inside) -> None:
        self.inside = inside

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor
                 ) -> dict[str, torch.Tensor]:
        self.inside.enter()
        try:
            return {"last_hidden_state": torch.ones((*input_ids.shape, 384))}
        finally:
            self.inside.leave()


def test_the_tokenizer_is_serialised_and_the_transformer_is_not() -> None:
    in_tokenizer, in_transformer = _Inside(), _Inside()
    encoder = Encoder(_tokenizer(in_tokenizer), _FakeTransformer(in_transformer))
    embedders = [MiniLMEmbedder(cache_size=1) for _ in range(2)]  # two instances, one model
    for embedder in embedders:
        embedder._encoder = encoder
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
    assert in_tokenizer.most == 1
    assert in_transformer.most == 2
