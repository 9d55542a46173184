"""What rolling back a crashed ingestion attempt needs beyond withdrawing its evidence.

An attempt marks its batch PROCESSING in SQL before its first graph write and COMPLETED after
its last write (``IngestionPipeline._begin`` / ``_complete``); a row left PROCESSING (or
FAILED by a worker) is a dead attempt's, whose episodes ``IngestionPipeline.roll_back``
withdraws. A batch's episodes are written first, with the batch's time as ``created_at``,
which every entity it writes carries as ``updated_at`` and every fact it ends as
``expired_at``: those facts hold again, and the entities it wrote have their evidence fields
recomputed by the sweep after the withdrawal (``entity_evidence``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from knotwork.domain.ids import stable_id
from knotwork.domain.models import Document, ProcessingStatus
from knotwork.domain.ports import GraphStore

_SAME_TIME = timedelta(milliseconds=1)  # stored times are ISO strings (microseconds)


def crashed(stored: Document | None) -> bool:
    """Stored by an attempt that began writing and did not finish: its graph state needs
    rolling back. PENDING (queued, not begun) and COMPLETED rows need none."""
    return stored is not None and stored.processing_status in (
        ProcessingStatus.PROCESSING, ProcessingStatus.FAILED)


def batch_times(graph: GraphStore, group: str, documents: Sequence[Document],
                episode_ids: Sequence[str]) -> set[datetime]:
    """The times of the batches that wrote these documents' episodes (their ``created_at``).

    ``episode_ids``: ids the attempt may have written beyond the stored chunks' (the row of a
    new document has no chunks yet)."""
    ids = {d.id for d in documents}
    candidates = [*episode_ids, *(stable_id(d.id, "chunk", str(i)) for d in documents
                                  for i in range(d.chunk_count))]
    return {e.created_at for e in graph.get_episodes(group, list(dict.fromkeys(candidates)))
            if e.document_id in ids}


def _at(when: datetime | None, times: set[datetime]) -> bool:
    return when is not None and any(abs(when - t) < _SAME_TIME for t in times)


def touched_by(graph: GraphStore, group: str, times: set[datetime]) -> set[str]:
    """Entities the dead batches wrote: their ``updated_at`` is the batch's time (not those
    its episodes mention: an attempt can die after the MENTIONS and before the stored
    entities are written, see ``IngestionPipeline._write_graph``)."""
    if not times:
        return set()
    return {e.id for e in graph.list_entities(group) if _at(e.updated_at, times)}


def revalidate(graph: GraphStore, group: str, times: set[datetime]) -> int:
    """Facts the dead batches ended (``expired_at`` is the batch's time) hold again: the redo
    ends them anew, with what that changes (summaries, vector payloads)."""
    if not times:
        return 0
    ended = [f.model_copy(update={"invalid_at": None, "expired_at": None})
             for f in graph.list_facts(group) if _at(f.expired_at, times)]
    if ended:
        graph.upsert_facts(ended)
    return len(ended)


def undo_endings(graph: GraphStore, group: str, documents: Sequence[Document],
                 episode_ids: Sequence[str]) -> set[str]:
    """Before the dead batches' episodes are withdrawn: the facts they ended hold again;
    returns the entities they wrote (recomputed after the withdrawal)."""
    times = batch_times(graph, group, documents, episode_ids)
    revalidate(graph, group, times)
    return touched_by(graph, group, times)
