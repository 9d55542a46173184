"""SQL of entity resolution (tables of migration 0002): blocking keys, the review queue, merge
lineage, plus mention re-pointing and audit reads on the document store's tables.

Shares the :class:`SqlDocumentStore`'s engine; bound parameters only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import CursorResult

from knotwork.domain.models import AuditEvent
from knotwork.domain.timeutil import utcnow
from knotwork.infra.sql.models import (
    AuditRow,
    ChunkRow,
    DocumentRow,
    EntityBlockKeyRow,
    EntityMentionRow,
    EntityMergeRow,
    ResolutionReviewRow,
)
from knotwork.infra.sql.store import SqlDocumentStore
from knotwork.resolution.models import (
    AuditEntry,
    MentionExample,
    MergeRecord,
    ReviewFilter,
    ReviewItem,
    ReviewPage,
    ReviewSort,
    ReviewStatus,
)

_IN = 500


def _review(row: ResolutionReviewRow) -> ReviewItem:
    return ReviewItem(id=row.id, group_id=row.group_id, status=ReviewStatus(row.status),
                      mention=row.mention, entity_type=row.entity_type, entity_id=row.entity_id,
                      decision=row.decision, score=row.score, candidates=row.candidates or [],
                      episode_ids=row.episode_ids or [], alias_added=row.alias_added,
                      created_at=row.created_at, decided_at=row.decided_at,
                      decided_by=row.decided_by, outcome=row.outcome)


def _merge(row: EntityMergeRow) -> MergeRecord:
    return MergeRecord(id=row.id, group_id=row.group_id, target_id=row.target_id,
                       source_ids=list(row.source_ids), snapshot=dict(row.snapshot),
                       actor=row.actor, created_at=row.created_at, undone_at=row.undone_at)


class SqlResolutionStore:
    def __init__(self, documents: SqlDocumentStore) -> None:
        self._docs = documents

    @property
    def documents(self) -> SqlDocumentStore:
        return self._docs

    # ------------------------------------------------------------------ blocking keys
    def replace_keys(self, group_id: str, keys: Mapping[str, Sequence[str]]) -> None:
        if not keys:
            return
        ids = list(keys)
        rows = [{"group_id": group_id, "key": k[:255], "entity_id": eid}
                for eid, ks in keys.items() for k in dict.fromkeys(ks)]
        with self._docs.transaction() as s:
            for i in range(0, len(ids), _IN):
                s.execute(delete(EntityBlockKeyRow).where(
                    EntityBlockKeyRow.group_id == group_id,
                    EntityBlockKeyRow.entity_id.in_(ids[i:i + _IN])))
            rows = list({(r["key"], r["entity_id"]): r for r in rows}.values())
            for i in range(0, len(rows), _IN):
                s.execute(insert(EntityBlockKeyRow), rows[i:i + _IN])

    def delete_keys(self, group_id: str, entity_ids: Sequence[str]) -> None:
        with self._docs.transaction() as s:
            for i in range(0, len(entity_ids), _IN):
                s.execute(delete(EntityBlockKeyRow).where(
                    EntityBlockKeyRow.group_id == group_id,
                    EntityBlockKeyRow.entity_id.in_(list(entity_ids[i:i + _IN]))))

    def lookup_keys(self, group_id: str, keys: Sequence[str], per_key: int) -> dict[str, list[str]]:
        """key -> entity ids filed under it (at most ``per_key`` each). Index: the primary
        key (group_id, key, entity_id); the window only ranks the rows the keys matched."""
        keys = list(dict.fromkeys(k[:255] for k in keys))
        out: dict[str, list[str]] = {}
        with self._docs.transaction() as s:
            for i in range(0, len(keys), _IN):
                rank = func.row_number().over(partition_by=EntityBlockKeyRow.key,
                                              order_by=EntityBlockKeyRow.entity_id.desc()).label("rn")
                inner = (select(EntityBlockKeyRow.key, EntityBlockKeyRow.entity_id, rank)
                         .where(EntityBlockKeyRow.group_id == group_id,
                                EntityBlockKeyRow.key.in_(keys[i:i + _IN])).subquery())
                stmt = select(inner.c.key, inner.c.entity_id).where(inner.c.rn <= per_key)
                for key, entity_id in s.execute(stmt):
                    out.setdefault(str(key), []).append(str(entity_id))
        return out

    def lookup(self, group_id: str, keys: Sequence[str], per_key: int, total: int) -> list[str]:
        """Entity ids filed under the keys: at most ``per_key`` per key, ``total`` overall,
        in the order of ``keys`` (the most selective first)."""
        found = self.lookup_keys(group_id, keys, per_key)
        ids: dict[str, None] = {}
        for key in keys:
            for entity_id in sorted(found.get(key[:255], [])):
                ids.setdefault(entity_id, None)
        return list(ids)[:total]

    # ------------------------------------------------------------------ review queue
    def add_reviews(self, items: Sequence[ReviewItem]) -> None:
        if not items:
            return
        with self._docs.transaction() as s:
            for item in items:
                s.merge(ResolutionReviewRow(**item.model_dump(mode="python") | {
                    "status": item.status.value,
                    "candidates": [c.model_dump() for c in item.candidates]}))

    def get_review(self, group_id: str, review_id: str) -> ReviewItem | None:
        with self._docs.transaction() as s:
            row = s.get(ResolutionReviewRow, review_id)
            return _review(row) if row is not None and row.group_id == group_id else None

    def list_reviews(self, group_id: str, status: ReviewStatus | None = ReviewStatus.PENDING,
                     query: str = "", limit: int = 50) -> list[ReviewItem]:
        stmt = select(ResolutionReviewRow).where(ResolutionReviewRow.group_id == group_id)
        if status is not None:
            stmt = stmt.where(ResolutionReviewRow.status == status.value)
        if query:
            stmt = stmt.where(func.lower(ResolutionReviewRow.mention).contains(query.lower()))
        stmt = stmt.order_by(ResolutionReviewRow.created_at.desc(), ResolutionReviewRow.id).limit(limit)
        with self._docs.transaction() as s:
            return [_review(r) for r in s.scalars(stmt)]

    def review_page(self, group_id: str, flt: ReviewFilter, offset: int = 0,
                    limit: int = 50) -> ReviewPage:
        """A page of the review items ``flt`` selects, their total, and counts per status."""
        row = ResolutionReviewRow
        where = [row.group_id == group_id]
        if flt.query:
            where.append(func.lower(row.mention).contains(flt.query.lower()))
        if flt.entity_type:
            where.append(row.entity_type == flt.entity_type)
        if flt.decision:
            where.append(row.decision == flt.decision)
        if flt.min_score is not None:
            where.append(row.score >= flt.min_score)
        if flt.max_score is not None:
            where.append(row.score <= flt.max_score)
        counts_stmt = select(row.status, func.count()).where(*where).group_by(row.status)
        if flt.status is not None:
            where.append(row.status == flt.status.value)
        impact = (func.jsonb_array_length(row.episode_ids) if self._docs.dialect == "postgresql"
                  else func.json_array_length(row.episode_ids))
        order = {ReviewSort.NEWEST: (row.created_at.desc(), row.id),
                 ReviewSort.IMPACT: (impact.desc(), row.created_at.desc(), row.id),
                 ReviewSort.SCORE: (row.score, row.created_at.desc(), row.id)}[flt.sort]
        page = select(row).where(*where).order_by(*order).offset(offset).limit(limit)
        total = select(func.count()).select_from(row).where(*where)
        with self._docs.transaction() as s:
            items = [_review(r) for r in s.scalars(page)]
            count = s.scalar(total) or 0
            counts = {str(status): int(n) for status, n in s.execute(counts_stmt)}
        return ReviewPage(items=items, total=count, counts=counts)

    def decide_review(self, group_id: str, review_id: str, status: ReviewStatus, actor: str,
                      outcome: str) -> bool:
        stmt = (update(ResolutionReviewRow)
                .where(ResolutionReviewRow.id == review_id,
                       ResolutionReviewRow.group_id == group_id,
                       ResolutionReviewRow.status == ReviewStatus.PENDING.value)
                .values(status=status.value, decided_at=utcnow(), decided_by=actor,
                        outcome=outcome))
        with self._docs.transaction() as s:
            return (cast(CursorResult[Any], s.execute(stmt)).rowcount or 0) == 1

    def reviews_of(self, group_id: str, entity_ids: Sequence[str],
                   status: ReviewStatus | None = ReviewStatus.PENDING) -> list[ReviewItem]:
        """Review items of these entities (by id), oldest first."""
        out: list[ReviewItem] = []
        ids = list(dict.fromkeys(entity_ids))
        with self._docs.transaction() as s:
            for i in range(0, len(ids), _IN):
                stmt = select(ResolutionReviewRow).where(
                    ResolutionReviewRow.group_id == group_id,
                    ResolutionReviewRow.entity_id.in_(ids[i:i + _IN]))
                if status is not None:
                    stmt = stmt.where(ResolutionReviewRow.status == status.value)
                out += [_review(r) for r in s.scalars(stmt)]
        return sorted(out, key=lambda r: (r.created_at, r.id))

    # ------------------------------------------------------------------ merges
    def add_merge(self, record: MergeRecord) -> None:
        with self._docs.transaction() as s:
            s.add(EntityMergeRow(**record.model_dump(mode="json", exclude={"created_at", "undone_at"}),
                                 created_at=record.created_at, undone_at=record.undone_at))

    def get_merge(self, group_id: str, merge_id: str) -> MergeRecord | None:
        with self._docs.transaction() as s:
            row = s.get(EntityMergeRow, merge_id)
            return _merge(row) if row is not None and row.group_id == group_id else None

    def merges_of(self, group_id: str, entity_id: str) -> list[MergeRecord]:
        """Merges into ``entity_id``, newest first (undone ones included)."""
        stmt = (select(EntityMergeRow)
                .where(EntityMergeRow.group_id == group_id, EntityMergeRow.target_id == entity_id)
                .order_by(EntityMergeRow.created_at.desc(), EntityMergeRow.id))
        with self._docs.transaction() as s:
            return [_merge(r) for r in s.scalars(stmt)]

    def mark_undone(self, group_id: str, merge_id: str) -> bool:
        stmt = (update(EntityMergeRow)
                .where(EntityMergeRow.id == merge_id, EntityMergeRow.group_id == group_id,
                       EntityMergeRow.undone_at.is_(None))
                .values(undone_at=utcnow()))
        with self._docs.transaction() as s:
            return (cast(CursorResult[Any], s.execute(stmt)).rowcount or 0) == 1

    def merged_into(self, group_id: str, entity_id: str) -> str | None:
        """The target of the live (not undone) merge that absorbed ``entity_id``."""
        stmt = (select(EntityMergeRow.target_id, EntityMergeRow.source_ids)
                .where(EntityMergeRow.group_id == group_id, EntityMergeRow.undone_at.is_(None))
                .order_by(EntityMergeRow.created_at.desc()))
        with self._docs.transaction() as s:
            for target, sources in s.execute(stmt):
                if entity_id in (sources or []):
                    return str(target)
        return None

    def live_merge_absorbing(self, group_id: str, entity_id: str) -> MergeRecord | None:
        """The newest live (not undone) merge with ``entity_id`` among its sources."""
        stmt = (select(EntityMergeRow.id, EntityMergeRow.source_ids)  # not the snapshots
                .where(EntityMergeRow.group_id == group_id, EntityMergeRow.undone_at.is_(None))
                .order_by(EntityMergeRow.created_at.desc(), EntityMergeRow.id))
        with self._docs.transaction() as s:
            for merge_id, sources in s.execute(stmt):
                if entity_id in (sources or []):
                    row = s.get(EntityMergeRow, merge_id)
                    return _merge(row) if row is not None else None
        return None

    # ------------------------------------------------------------------ mentions, audit
    def mention_texts(self, mention_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        with self._docs.transaction() as s:
            for i in range(0, len(mention_ids), _IN):
                stmt = select(EntityMentionRow.id, EntityMentionRow.text).where(
                    EntityMentionRow.id.in_(list(mention_ids[i:i + _IN])))
                out.update((str(a), str(b)) for a, b in s.execute(stmt))
        return out

    def mention_ids(self, group_id: str, entity_id: str, chunk_ids: Sequence[str] | None = None
                    ) -> list[str]:
        stmt = select(EntityMentionRow.id).where(EntityMentionRow.group_id == group_id,
                                                 EntityMentionRow.entity_id == entity_id)
        if chunk_ids is not None:
            stmt = stmt.where(EntityMentionRow.chunk_id.in_(list(chunk_ids)[:_IN]))
        with self._docs.transaction() as s:
            return sorted(s.scalars(stmt))

    def repoint_mentions(self, group_id: str, mention_ids: Sequence[str], entity_id: str) -> int:
        moved = 0
        with self._docs.transaction() as s:
            for i in range(0, len(mention_ids), _IN):
                stmt = (update(EntityMentionRow)
                        .where(EntityMentionRow.group_id == group_id,
                               EntityMentionRow.id.in_(list(mention_ids[i:i + _IN])))
                        .values(entity_id=entity_id))
                moved += cast(CursorResult[Any], s.execute(stmt)).rowcount or 0
        return moved

    def mention_examples(self, group_id: str, entity_id: str, limit: int = 3,
                         window: int = 80) -> list[MentionExample]:
        return self.mention_examples_of(group_id, [entity_id], limit, window).get(entity_id, [])

    def mention_examples_of(self, group_id: str, entity_ids: Sequence[str], limit: int = 3,
                            window: int = 80) -> dict[str, list[MentionExample]]:
        """The first ``limit`` mentions of each entity (by chunk, then position), in one query,
        each with a snippet of ``window`` characters either side and its document."""
        if not entity_ids:
            return {}
        mention = EntityMentionRow
        rank = func.row_number().over(partition_by=mention.entity_id,
                                      order_by=(mention.chunk_id, mention.span_start)).label("rank")
        ranked = (select(mention.entity_id, mention.chunk_id, mention.text, mention.span_start,
                         mention.span_end, rank)
                  .where(mention.group_id == group_id,
                         mention.entity_id.in_(list(dict.fromkeys(entity_ids))[:_IN]))
                  .subquery())
        stmt = (select(ranked.c.entity_id, ranked.c.chunk_id, ranked.c.text, ranked.c.span_start,
                       ranked.c.span_end, ChunkRow.content, DocumentRow.title, DocumentRow.url)
                .join(ChunkRow, ChunkRow.id == ranked.c.chunk_id)
                .join(DocumentRow, DocumentRow.id == ChunkRow.document_id)
                .where(ranked.c.rank <= limit)
                .order_by(ranked.c.entity_id, ranked.c.rank))
        out: dict[str, list[MentionExample]] = {}
        with self._docs.transaction() as s:
            for entity_id, chunk_id, text, start, end, content, title, url in s.execute(stmt):
                lo, hi = max(0, start - window), min(len(content), end + window)
                out.setdefault(entity_id, []).append(MentionExample(
                    chunk_id=chunk_id, text=text, snippet=" ".join(content[lo:hi].split()),
                    document_title=title, document_url=url))
        return out

    def mention_extractors(self, group_id: str, entity_ids: Sequence[str]
                           ) -> dict[str, dict[str, int]]:
        """Entity id -> how many of its mentions each extractor gave (the type evidence of
        ``resolution.retype``)."""
        out: dict[str, dict[str, int]] = {}
        ids = list(dict.fromkeys(entity_ids))
        with self._docs.transaction() as s:
            for i in range(0, len(ids), _IN):
                stmt = (select(EntityMentionRow.entity_id, EntityMentionRow.extractor, func.count())
                        .where(EntityMentionRow.group_id == group_id,
                               EntityMentionRow.entity_id.in_(ids[i:i + _IN]))
                        .group_by(EntityMentionRow.entity_id, EntityMentionRow.extractor))
                for entity_id, extractor, n in s.execute(stmt):
                    out.setdefault(str(entity_id), {})[str(extractor)] = int(n)
        return out

    def mention_evidence(self, group_id: str, entity_ids: Sequence[str]
                         ) -> dict[str, tuple[int, dict[str, int]]]:
        """Entity id -> (how many documents mention it, its mentions per extractor): the
        evidence ``resolution.salience`` judges an entity by."""
        docs: dict[str, set[str]] = {}
        counts: dict[str, dict[str, int]] = {}
        ids = list(dict.fromkeys(entity_ids))
        with self._docs.transaction() as s:
            for i in range(0, len(ids), _IN):
                stmt = (select(EntityMentionRow.entity_id, EntityMentionRow.extractor,
                               ChunkRow.document_id)
                        .join(ChunkRow, ChunkRow.id == EntityMentionRow.chunk_id)
                        .where(EntityMentionRow.group_id == group_id,
                               EntityMentionRow.entity_id.in_(ids[i:i + _IN])))
                for entity_id, extractor, document_id in s.execute(stmt):
                    key = str(entity_id)
                    docs.setdefault(key, set()).add(str(document_id))
                    per = counts.setdefault(key, {})
                    per[str(extractor)] = per.get(str(extractor), 0) + 1
        return {k: (len(docs[k]), counts[k]) for k in counts}

    def audit_details(self, group_id: str, action: str) -> list[str]:
        """The detail of every audit row of the tenant with this action, oldest first."""
        stmt = (select(AuditRow.detail).where(AuditRow.group_id == group_id, AuditRow.action == action)
                .order_by(AuditRow.created_at, AuditRow.id))
        with self._docs.transaction() as s:
            return [str(d or "") for d in s.scalars(stmt)]

    def mention_counts(self, group_id: str, entity_ids: Sequence[str]) -> dict[str, int]:
        stmt = (select(EntityMentionRow.entity_id, func.count())
                .where(EntityMentionRow.group_id == group_id,
                       EntityMentionRow.entity_id.in_(list(dict.fromkeys(entity_ids))[:_IN]))
                .group_by(EntityMentionRow.entity_id))
        with self._docs.transaction() as s:
            return {str(entity_id): int(n) for entity_id, n in s.execute(stmt)}

    def record_audits(self, events: Sequence[AuditEvent]) -> None:
        if not events:
            return
        now = utcnow()
        with self._docs.transaction() as s:
            s.add_all(AuditRow(group_id=e.group_id, action=e.action, entity_id=e.entity_id,
                               detail=e.detail, created_at=now) for e in events)

    def has_audit(self, group_id: str, entity_id: str, action: str, needle: str) -> bool:
        """Whether an audit row of the entity with this action mentions ``needle``."""
        stmt = (select(AuditRow.id)
                .where(AuditRow.group_id == group_id, AuditRow.entity_id == entity_id,
                       AuditRow.action == action, AuditRow.detail.contains(needle, autoescape=True))
                .limit(1))
        with self._docs.transaction() as s:
            return s.scalar(stmt) is not None

    def audit_trail(self, group_id: str, entity_id: str, limit: int = 100) -> list[AuditEntry]:
        stmt = (select(AuditRow).where(AuditRow.group_id == group_id, AuditRow.entity_id == entity_id)
                .order_by(AuditRow.created_at.desc(), AuditRow.id.desc()).limit(limit))
        with self._docs.transaction() as s:
            return [AuditEntry(action=r.action, entity_id=r.entity_id, detail=r.detail,
                               created_at=r.created_at) for r in s.scalars(stmt)]

    def delete_group(self, group_id: str) -> None:
        with self._docs.transaction() as s:
            for model in (EntityBlockKeyRow, ResolutionReviewRow, EntityMergeRow):
                s.execute(delete(model).where(model.group_id == group_id))
