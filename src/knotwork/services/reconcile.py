"""Repair drift between the graph, the vector store and SQL after a crash (``knotwork reconcile``).

Ingestion marks a batch's documents PROCESSING in SQL, writes graph → vectors → SQL chunks
and mentions, and marks them COMPLETED last; each step is idempotent, so a crash leaves one of:

* documents PROCESSING (or FAILED, by a worker) with graph state of the attempt that died:
  rolled back (``IngestionPipeline.roll_back``: their episodes withdrawn, what only they
  evidenced retired) and listed; ingesting their source again redoes them. ``knotwork
  ingest`` of the same source does the rollback itself, so re-running the interrupted
  command is the whole recovery; reconcile is for stores nobody re-ingests into;
* graph evidence whose SQL document is gone (a delete that stopped half-way): detached,
  then facts and entities left without evidence are retired (``Lineage.sweep``);
* graph entities / facts / episodes without their vectors (a crash between the graph and the
  vector write; a re-run would not re-embed an unchanged entity): embedded and written (not
  derived facts, which have none by design);
* vectors whose graph object is gone: deleted;
* documents queued and not begun (PENDING): listed; a worker (or an ingest) finishes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from knotwork.domain.models import Document, Episode, ProcessingStatus
from knotwork.domain.ports import Collection, VectorPoint
from knotwork.ingestion.embedding_text import (
    entity_point,
    entity_text,
    fact_point,
    passage_id,
    passage_point,
    passage_text,
    passage_texts,
)
from knotwork.retrieval.evidence_text import evidence_texts, sentence_point, sentence_vector_id
from knotwork.runtime import Runtime

Progress = Callable[[str], None]
_EMBED_BATCH = 256


class ReconcileReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_id: str
    dry_run: bool
    rolled_back_episodes: int = 0  # of unfinished (crashed) documents, withdrawn
    orphan_episode_documents: list[str] = Field(default_factory=list)
    facts_retired: int = 0
    entities_retired: int = 0
    entity_vectors_added: int = 0
    entity_vectors_removed: int = 0
    fact_vectors_added: int = 0
    fact_vectors_removed: int = 0
    passage_vectors_added: int = 0
    passage_vectors_removed: int = 0
    sentence_vectors_added: int = 0
    sentence_vectors_removed: int = 0
    unfinished_documents: list[str] = Field(default_factory=list)

    @property
    def repaired(self) -> int:
        return (self.rolled_back_episodes + len(self.orphan_episode_documents) + self.facts_retired + self.entities_retired
                + self.entity_vectors_added + self.entity_vectors_removed
                + self.fact_vectors_added + self.fact_vectors_removed
                + self.passage_vectors_added + self.passage_vectors_removed
                + self.sentence_vectors_added + self.sentence_vectors_removed)


def _ids(rt: Runtime, collection: Collection, group: str) -> set[str]:
    return {p.id for p in rt.vectors.scan(collection, group, 1024, with_vectors=False)}


def _upsert_embedded(rt: Runtime, collection: Collection, texts: Sequence[str],
                     build: Callable[[int, list[float]], VectorPoint]) -> None:
    for start in range(0, len(texts), _EMBED_BATCH):
        vectors = rt.embedder.embed(list(texts[start : start + _EMBED_BATCH]))
        rt.vectors.upsert(collection, [build(start + i, v) for i, v in enumerate(vectors)])


def _roll_back(rt: Runtime, group: str, crashed: Sequence[Document], report: ReconcileReport,
               *, dry_run: bool) -> int:
    """Withdraw what attempts that died left of these documents; the episodes withdrawn."""
    ids = {d.id for d in crashed}
    total = rt.graph.counts(group).episodes
    written = [e.id for e in rt.graph.get_episodes(group, rt.graph.recent_episode_ids(group, total))
               if e.document_id in ids] if total else []
    if dry_run:
        return len(written)
    from knotwork.ingestion.pipeline import IngestionPipeline

    rolled = IngestionPipeline(rt, group).roll_back(crashed, written)
    report.facts_retired += rolled.facts
    report.entities_retired += rolled.entities
    return rolled.episodes


def reconcile(rt: Runtime, group: str, *, dry_run: bool = False,
              progress: Progress | None = None) -> ReconcileReport:
    say = progress or (lambda _: None)
    report = ReconcileReport(group_id=group, dry_run=dry_run)
    graph = rt.graph
    documents = {d.id: d for d in rt.documents.list_documents(group)}
    report.unfinished_documents = sorted(
        f"{d.title or d.source_id} ({d.processing_status.value})" for d in documents.values()
        if d.processing_status is not ProcessingStatus.COMPLETED)

    crashed = [d for d in documents.values()
               if d.processing_status in (ProcessingStatus.PROCESSING, ProcessingStatus.FAILED)]
    if crashed:
        say("unfinished documents")
        report.rolled_back_episodes = _roll_back(rt, group, crashed, report, dry_run=dry_run)

    say("graph evidence without documents")
    total = graph.counts(group).episodes
    episode_ids = graph.recent_episode_ids(group, total) if total else []
    episodes = graph.get_episodes(group, episode_ids)
    orphan_docs = sorted({e.document_id for e in episodes if e.document_id not in documents})
    report.orphan_episode_documents = orphan_docs
    if orphan_docs and not dry_run:
        from knotwork.communities.service import CommunityService
        from knotwork.ingestion.lineage import Lineage

        graph.detach_document_episodes(group, orphan_docs)
        retired = Lineage(rt, group, CommunityService(rt, group)).sweep("reconcile", [])
        report.facts_retired += retired.facts
        report.entities_retired += retired.entities
        episodes = [e for e in episodes if e.document_id in documents]

    say("entity vectors")
    entities = {e.id: e for e in graph.list_entities(group)}
    stored = _ids(rt, Collection.ENTITIES, group)
    missing = [entities[i] for i in sorted(entities.keys() - stored)]
    extra = sorted(stored - entities.keys())
    report.entity_vectors_added, report.entity_vectors_removed = len(missing), len(extra)
    if not dry_run:
        _upsert_embedded(rt, Collection.ENTITIES, [entity_text(e) for e in missing],
                         lambda i, v: entity_point(missing[i], v))
        rt.vectors.delete(Collection.ENTITIES, extra)

    say("fact vectors")
    # a derived fact (WORKS_AT from a workspace's member list) has no vector by design: it
    # must stay out of vector search, so it is neither missing one nor allowed to keep one
    facts = {f.id: f for f in graph.list_facts(group) if not f.derived}
    stored = _ids(rt, Collection.FACTS, group)
    missing_facts = [facts[i] for i in sorted(facts.keys() - stored)]
    extra = sorted(stored - facts.keys())
    report.fact_vectors_added, report.fact_vectors_removed = len(missing_facts), len(extra)
    if not dry_run:
        _upsert_embedded(rt, Collection.FACTS, [f.fact for f in missing_facts],
                         lambda i, v: fact_point(missing_facts[i], v))
        rt.vectors.delete(Collection.FACTS, extra)

    say("passage vectors")
    tokens = rt.settings.passage_tokens
    wanted = {passage_id(e.id, i): (e, i, text) for e in episodes
              for i, text in enumerate(passage_texts(e.content, tokens))}
    stored = _ids(rt, Collection.CHUNKS, group)
    missing_passages = [wanted[pid] for pid in sorted(wanted.keys() - stored)]
    extra = sorted(stored - wanted.keys())
    report.passage_vectors_added, report.passage_vectors_removed = len(missing_passages), len(extra)
    if not dry_run:
        def title(document_id: str) -> str:
            doc = documents.get(document_id)
            return doc.title if doc is not None else ""

        def point(k: int, vector: list[float]) -> VectorPoint:
            episode, index, _ = missing_passages[k]
            return passage_point(episode.id, episode.document_id, episode.source_description,
                                 index, group, vector)

        _upsert_embedded(rt, Collection.CHUNKS,
                         [passage_text(title(e.document_id), text)
                          for e, _, text in missing_passages], point)
        rt.vectors.delete(Collection.CHUNKS, extra)

    say("sentence vectors")
    _sentences(rt, group, episodes, report, dry_run=dry_run)
    return report


def _sentences(rt: Runtime, group: str, episodes: Sequence[Episode], report: ReconcileReport,
               *, dry_run: bool) -> None:
    """Candidate sentence vectors (issue 23): those of no stored episode text are deleted;
    with ``Settings.evidence_vectors`` on, the missing ones are embedded."""
    wanted = {sentence_vector_id(e.id, text): (e, text) for e in episodes
              for text in evidence_texts(e)}
    stored = _ids(rt, Collection.SENTENCES, group)
    missing = [wanted[sid] for sid in sorted(wanted.keys() - stored)] \
        if rt.settings.evidence_vectors else []
    extra = sorted(stored - wanted.keys())
    report.sentence_vectors_added, report.sentence_vectors_removed = len(missing), len(extra)
    if not dry_run:
        _upsert_embedded(rt, Collection.SENTENCES, [text for _, text in missing],
                         lambda k, v: sentence_point(missing[k][0], missing[k][1], v))
        rt.vectors.delete(Collection.SENTENCES, extra)
