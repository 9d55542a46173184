"""Naive vector RAG baseline: top-k chunks by MiniLM cosine, no graph, no LLM.

The baseline answers the way Knotwork does without an LLM (extractively), so the two are
comparable: the answer is the ``answer_sentences`` sentences of the top-k chunks closest to
the question (cosine of the same embedder), and every one of the top-k chunks is cited, with
its best sentence as the citation text. It abstains (confidence below ``min_score``) when the
best chunk is not similar enough.

Usage over any store Knotwork has ingested::

    from bench.baselines.vector_rag import VectorRAG
    with Knotwork(settings) as kw:
        result = VectorRAG(kw.runtime, "default").query("Who leads Project Atlas?")

``result`` is a :class:`knotwork.domain.models.QueryResult` (``mode_used`` = LOCAL,
``reasoning_trace`` starts with ``"baseline: vector-rag"``), so evaluation code treats both alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from knotwork.domain.models import QueryMode, QueryResult
from knotwork.domain.ports import Collection
from knotwork.retrieval.citations import CitationResolver
from knotwork.retrieval.sentences import as_sentence, split_sentences, strip_markup
from knotwork.runtime import Runtime

NO_ANSWER = "I could not find support for this in the documents."


@dataclass(frozen=True)
class VectorRAGConfig:
    top_k: int = 3  # chunks retrieved and cited
    answer_sentences: int = 2  # sentences of those chunks that form the answer
    min_score: float = 0.3  # best chunk cosine below this: abstain
    min_sentence_chars: int = 8


class VectorRAG:
    def __init__(self, runtime: Runtime, group_id: str, config: VectorRAGConfig | None = None) -> None:
        self._rt = runtime
        self._group = group_id
        self._cfg = config or VectorRAGConfig()

    def query(self, question: str) -> QueryResult:
        cfg = self._cfg
        qvec = self._rt.embedder.embed([question])[0]
        hits = self._rt.vectors.search(Collection.CHUNKS, qvec, group_id=self._group, limit=cfg.top_k)
        trace = ["baseline: vector-rag", f"chunks: {len(hits)}"]
        if not hits or hits[0].score < cfg.min_score:
            best = hits[0].score if hits else 0.0
            trace.append(f"abstained: best chunk {best:.2f} < {cfg.min_score}")
            return QueryResult(answer=NO_ANSWER, citations=[], confidence=min(0.2, max(best, 0.0)),
                               mode_used=QueryMode.LOCAL, reasoning_trace=trace)
        chunk_ids = [str(h.payload.get("chunk_id") or h.id) for h in hits]
        resolver = CitationResolver(self._rt.documents)
        sources = resolver.chunks(chunk_ids)
        sentences: list[tuple[str, str]] = []  # (sentence, chunk id)
        for chunk, _doc in sources:
            for raw in split_sentences(chunk.content):
                text = strip_markup(raw)
                if len(text) >= cfg.min_sentence_chars:
                    sentences.append((text, chunk.id))
        if not sentences:
            return QueryResult(answer=NO_ANSWER, citations=[], confidence=0.0,
                               mode_used=QueryMode.LOCAL, reasoning_trace=trace)
        vectors = self._rt.embedder.embed([s for s, _ in sentences])
        scored = sorted(((sum(a * b for a, b in zip(qvec, v, strict=True)), s, c)
                         for (s, c), v in zip(sentences, vectors, strict=True)),
                        key=lambda t: -t[0])
        answer = " ".join(as_sentence(s) for _, s, _ in scored[: cfg.answer_sentences])
        best_of: dict[str, str] = {}
        for _, s, c in scored:
            best_of.setdefault(c, s)
        citations = resolver.resolve([(best_of.get(cid, ""), [cid]) for cid in chunk_ids],
                                     limit=cfg.top_k)
        return QueryResult(answer=answer, citations=citations,
                           confidence=round(max(0.0, min(1.0, hits[0].score)), 3),
                           mode_used=QueryMode.LOCAL, reasoning_trace=trace,
                           context="\n\n".join(chunk.content for chunk, _ in sources))
