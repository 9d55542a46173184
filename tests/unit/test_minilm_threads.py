"""The MiniLM embedder serialises its use of the shared tokenizer, and only that: the fast
tokenizer keeps the padding / truncation of its last call, so two threads inside it at once
could tokenize one batch with the other's settings (a 400 "Unable to create tensor" when REST
clients missed the query cache together), while the transformer only reads its weights and
runs in both threads at once (ingestion's passages beside a query's texts). A fake model
records how many threads are inside each part at once."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import torch

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


class _FakeTokenizer:
    pad_token_id = 0

    def __init__(self, inside: _Inside) -> None:
        self.inside = inside

    def __call__(self, texts: list[str], **_: Any) -> dict[str, list[list[int]]]:
        self.inside.enter()
        try:
            return {"input_ids": [[1] * len(t.split()) for t in texts]}
        finally:
            self.inside.leave()


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


class _FakeModel:
    max_seq_length = 256

    def __init__(self, tokenizer: _Inside, transformer: _Inside) -> None:
        self.tokenizer = _FakeTokenizer(tokenizer)
        self.transformer = SimpleNamespace(auto_model=_FakeTransformer(transformer))

    def __getitem__(self, index: int) -> SimpleNamespace:
        assert index == 0
        return self.transformer


def test_the_tokenizer_is_serialised_and_the_transformer_is_not() -> None:
    in_tokenizer, in_transformer = _Inside(), _Inside()
    model = _FakeModel(in_tokenizer, in_transformer)
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
    assert in_tokenizer.most == 1
    assert in_transformer.most == 2
