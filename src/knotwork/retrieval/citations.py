"""From chunk ids to citations (document metadata from the SQL store)."""

from __future__ import annotations

from collections.abc import Sequence

from knotwork.domain.models import Chunk, Citation, Document
from knotwork.domain.ports import DocumentStore
from knotwork.domain.timeutil import to_iso


class CitationResolver:
    def __init__(self, documents: DocumentStore) -> None:
        self._store = documents
        self._chunks: dict[str, Chunk] = {}
        self._docs: dict[str, Document] = {}

    def _load(self, chunk_ids: Sequence[str]) -> None:
        missing = list(dict.fromkeys(c for c in chunk_ids if c not in self._chunks))
        if not missing:
            return
        for chunk in self._store.get_chunks(missing):
            self._chunks[chunk.id] = chunk
        doc_ids = {c.document_id for c in self._chunks.values()} - set(self._docs)
        for doc in self._store.get_documents(sorted(doc_ids)) if doc_ids else []:
            self._docs[doc.id] = doc

    def prefetch(self, chunk_ids: Sequence[str]) -> None:
        """Load these chunks and their documents now, in one read each (later
        :meth:`chunks` / :meth:`resolve` calls over them read nothing)."""
        self._load(chunk_ids)

    def chunks(self, chunk_ids: Sequence[str]) -> list[tuple[Chunk, Document]]:
        self._load(chunk_ids)
        out = []
        for cid in chunk_ids:
            chunk = self._chunks.get(cid)
            if chunk is not None and chunk.document_id in self._docs:
                out.append((chunk, self._docs[chunk.document_id]))
        return out

    def resolve(self, evidence: Sequence[tuple[str, Sequence[str]]], limit: int) -> list[Citation]:
        """One citation per (evidence text, chunk); newest evidence chunk first."""
        out: list[Citation] = []
        seen: set[str] = set()
        for text, chunk_ids in evidence:
            for chunk, doc in reversed(self.chunks(list(chunk_ids))):
                if chunk.id in seen:
                    continue
                seen.add(chunk.id)
                citation = Citation(
                    document_id=doc.id, source_system=doc.source_system.value,
                    source_id=doc.source_id, title=doc.title, url=doc.url,
                    created_at=to_iso(doc.created_at or doc.modified_at), chunk_id=chunk.id,
                    text=_excerpt(text, chunk.content))
                citation._evidence = text
                out.append(citation)
                if len(out) >= limit:
                    return out
        return out


def _excerpt(text: str, content: str) -> str:
    """The evidence sentence when it occurs in the chunk, else the chunk's opening."""
    if text and text in content:
        return text
    return content[:300]
