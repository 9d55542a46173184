"""Follow-up tasks of an ingestion batch, and why a worker's death cannot lose them.

A committed EXTRACT_ENTITIES batch calls for RESOLVE_ENTITY tasks (its deferred, tied
decisions) and COMMUNITY_UPDATED tasks (the communities it left stale, unless re-summarized
inline). The worker enqueues them after the commit and before it acknowledges the batch's
jobs, so a worker that dies in between leaves the jobs pending while their documents are
already COMPLETED: the redelivery has nothing left to extract.

No outbox table is needed because the follow-ups are derived from state that is durable
before a document is COMPLETED (the pipeline writes COMPLETED last):

* a deferred decision is a PENDING review item with decision ``new`` and an entity
  (SQL, written with the batch's blocking keys before its graph write);
* a stale community has ``summary_stale`` set (graph; community upkeep runs before
  COMPLETED).

So a redelivered or retried job whose document is found COMPLETED re-derives them
(:func:`outstanding_tasks`): RESOLVE_ENTITY for the pending ``new`` review items of the
entities its chunks mention, COMMUNITY_UPDATED for the tenant's stale communities. Some may
have been enqueued already: handlers are idempotent, and a RESOLVE_ENTITY task's id is
deterministic (its entity and first review item), so its decision is audited once.
"""

from __future__ import annotations

from collections.abc import Sequence

from knotwork.domain.ids import stable_id
from knotwork.domain.tasks import CommunityUpdatedTask, Priority, ResolveEntityTask, Task
from knotwork.resolution.models import ReviewItem
from knotwork.resolution.service import resolution_sql
from knotwork.runtime import Runtime
from knotwork.services.worker.resolve import deferred_tasks


def batch_tasks(
    rt: Runtime, group_id: str, deferred: Sequence[ReviewItem], stale_communities: Sequence[str]
) -> list[Task]:
    """The follow-ups of a batch just committed (its report's deferred reviews and stale
    communities)."""
    tasks: list[Task] = list(deferred_tasks(group_id, deferred))
    if not rt.settings.community_inline_summaries:
        tasks += community_tasks(rt, group_id, stale_communities)
    return tasks


def community_tasks(rt: Runtime, group_id: str, community_ids: Sequence[str]) -> list[Task]:
    out: list[Task] = []
    for community_id in dict.fromkeys(community_ids):
        community = rt.graph.get_community(group_id, community_id)
        if community is not None:
            out.append(
                CommunityUpdatedTask(
                    group_id=group_id,
                    community_id=community_id,
                    level=community.level,
                    entity_count=community.entity_count,
                    priority=Priority.LOW,
                )
            )
    return out


def resolve_tasks(
    rt: Runtime, group_id: str, document_ids: Sequence[str]
) -> list[ResolveEntityTask]:
    """RESOLVE_ENTITY for the entities of these documents' chunks with a pending deferred
    (``new``) review item."""
    sql = resolution_sql(rt)
    if sql is None or not document_ids:
        return []
    entity_ids: dict[str, None] = {}
    for document in rt.documents.get_documents(list(document_ids)):
        for index in range(document.chunk_count):
            chunk_id = stable_id(document.id, "chunk", str(index))
            entity_ids.update(dict.fromkeys(rt.graph.episode_entity_ids(group_id, chunk_id)))
    if not entity_ids:
        return []
    reviews = [
        r for r in sql.reviews_of(group_id, list(entity_ids)) if r.decision == "new" and r.entity_id
    ]
    return deferred_tasks(group_id, reviews)


def outstanding_tasks(rt: Runtime, group_id: str, document_ids: Sequence[str]) -> list[Task]:
    """The follow-ups a batch that completed these documents may not have enqueued (its
    worker died or failed in between): derived from the stored state, see the module."""
    tasks: list[Task] = list(resolve_tasks(rt, group_id, document_ids))
    if not rt.settings.community_inline_summaries:
        stale = [c.id for c in rt.graph.list_communities(group_id) if c.summary_stale]
        tasks += community_tasks(rt, group_id, stale)
    return tasks
