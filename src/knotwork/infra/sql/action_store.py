"""SQL of undoable entity actions and cannot-link names (tables of migration 0004), and the
mention reads a split selects from. Shares the :class:`SqlDocumentStore`'s engine; bound
parameters only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import delete, select, update
from sqlalchemy.engine import CursorResult

from knotwork.domain.timeutil import utcnow
from knotwork.infra.sql.models import (
    ChunkRow,
    DocumentRow,
    EntityActionRow,
    EntityCannotLinkRow,
    EntityMentionRow,
    ResolutionReviewRow,
)
from knotwork.infra.sql.store import SqlDocumentStore
from knotwork.resolution.models import (
    ActionKind,
    ActionSnapshot,
    EntityAction,
    MentionRow,
    ReviewStatus,
)

_IN = 500


def _action(row: EntityActionRow) -> EntityAction:
    return EntityAction(id=row.id, group_id=row.group_id, kind=ActionKind(row.kind),
                        review_id=row.review_id, entity_ids=list(row.entity_ids or []),
                        snapshot=ActionSnapshot.model_validate(row.snapshot), actor=row.actor,
                        created_at=row.created_at, undone_at=row.undone_at)


class SqlActionStore:
    def __init__(self, documents: SqlDocumentStore) -> None:
        self._docs = documents

    # ------------------------------------------------------------------ actions
    def add_action(self, action: EntityAction) -> None:
        with self._docs.transaction() as s:
            s.add(EntityActionRow(id=action.id, group_id=action.group_id, kind=action.kind.value,
                                  review_id=action.review_id, entity_ids=action.entity_ids,
                                  snapshot=action.snapshot.model_dump(mode="json"),
                                  actor=action.actor, created_at=action.created_at,
                                  undone_at=action.undone_at))

    def get_action(self, group_id: str, action_id: str) -> EntityAction | None:
        with self._docs.transaction() as s:
            row = s.get(EntityActionRow, action_id)
            return _action(row) if row is not None and row.group_id == group_id else None

    def actions(self, group_id: str, limit: int = 50, live_only: bool = False) -> list[EntityAction]:
        """Newest first."""
        stmt = select(EntityActionRow).where(EntityActionRow.group_id == group_id)
        if live_only:
            stmt = stmt.where(EntityActionRow.undone_at.is_(None))
        stmt = stmt.order_by(EntityActionRow.created_at.desc(), EntityActionRow.id.desc()).limit(limit)
        with self._docs.transaction() as s:
            return [_action(r) for r in s.scalars(stmt)]

    def live_actions_since(self, group_id: str, action: EntityAction) -> list[EntityAction]:
        """Live actions created after ``action`` (the ones to undo before it)."""
        stmt = (select(EntityActionRow)
                .where(EntityActionRow.group_id == group_id, EntityActionRow.undone_at.is_(None),
                       EntityActionRow.created_at > action.created_at))
        with self._docs.transaction() as s:
            return [_action(r) for r in s.scalars(stmt)]

    def mark_undone(self, group_id: str, action_id: str) -> bool:
        stmt = (update(EntityActionRow)
                .where(EntityActionRow.id == action_id, EntityActionRow.group_id == group_id,
                       EntityActionRow.undone_at.is_(None))
                .values(undone_at=utcnow()))
        with self._docs.transaction() as s:
            return (cast(CursorResult[Any], s.execute(stmt)).rowcount or 0) == 1

    def reopen_review(self, group_id: str, review_id: str) -> bool:
        """Put a decided review item back to pending (its decision undone)."""
        stmt = (update(ResolutionReviewRow)
                .where(ResolutionReviewRow.id == review_id,
                       ResolutionReviewRow.group_id == group_id)
                .values(status=ReviewStatus.PENDING.value, decided_at=None, decided_by=None,
                        outcome=None))
        with self._docs.transaction() as s:
            return (cast(CursorResult[Any], s.execute(stmt)).rowcount or 0) == 1

    # ------------------------------------------------------------------ cannot-link
    def add_cannot_links(self, group_id: str, pairs: Sequence[tuple[str, str]],
                         action_id: str) -> list[tuple[str, str]]:
        """Store (entity id, name key) pairs; returns the ones that were new."""
        wanted = list(dict.fromkeys(pairs))
        if not wanted:
            return []
        have = set(self.cannot_links(group_id, [e for e, _ in wanted]))
        new = [p for p in wanted if p not in have]
        now = utcnow()
        with self._docs.transaction() as s:
            s.add_all(EntityCannotLinkRow(group_id=group_id, entity_id=e, name_key=k,
                                          action_id=action_id, created_at=now) for e, k in new)
        return new

    def remove_cannot_links(self, group_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        with self._docs.transaction() as s:
            for entity_id, key in pairs:
                s.execute(delete(EntityCannotLinkRow).where(
                    EntityCannotLinkRow.group_id == group_id,
                    EntityCannotLinkRow.entity_id == entity_id,
                    EntityCannotLinkRow.name_key == key))

    def cannot_links(self, group_id: str, entity_ids: Sequence[str] | None = None
                     ) -> list[tuple[str, str]]:
        """(entity id, name key) pairs of the group, or of these entities."""
        stmt = select(EntityCannotLinkRow.entity_id, EntityCannotLinkRow.name_key).where(
            EntityCannotLinkRow.group_id == group_id)
        out: list[tuple[str, str]] = []
        with self._docs.transaction() as s:
            if entity_ids is None:
                return [(str(a), str(b)) for a, b in s.execute(stmt)]
            ids = list(dict.fromkeys(entity_ids))
            for i in range(0, len(ids), _IN):
                part = stmt.where(EntityCannotLinkRow.entity_id.in_(ids[i:i + _IN]))
                out += [(str(a), str(b)) for a, b in s.execute(part)]
        return out

    # ------------------------------------------------------------------ mentions
    def mention_rows(self, group_id: str, entity_id: str, limit: int = 5000) -> list[MentionRow]:
        """The entity's stored mentions with their documents, by document then position."""
        stmt = (select(EntityMentionRow.id, EntityMentionRow.chunk_id, EntityMentionRow.text,
                       ChunkRow.document_id, DocumentRow.title)
                .join(ChunkRow, ChunkRow.id == EntityMentionRow.chunk_id)
                .join(DocumentRow, DocumentRow.id == ChunkRow.document_id)
                .where(EntityMentionRow.group_id == group_id,
                       EntityMentionRow.entity_id == entity_id)
                .order_by(DocumentRow.title, ChunkRow.document_id, EntityMentionRow.chunk_id,
                          EntityMentionRow.span_start)
                .limit(limit))
        with self._docs.transaction() as s:
            return [MentionRow(id=i, chunk_id=c, text=t, document_id=d, document_title=title or "")
                    for i, c, t, d, title in s.execute(stmt)]
