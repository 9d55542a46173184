"""Factories shared by ingestion, the API and the CLI: the resolution config from Settings and
the SQL store of the resolution tables (None when the document store is not SQL)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knotwork.resolution.scoring import ResolutionConfig
from knotwork.settings import Settings

if TYPE_CHECKING:
    from knotwork.infra.sql.resolution_store import SqlResolutionStore
    from knotwork.runtime import Runtime


def resolution_config(settings: Settings) -> ResolutionConfig:
    config = ResolutionConfig(
        weight_name=settings.resolution_weight_name,
        weight_embedding=settings.resolution_weight_embedding,
        weight_type=settings.resolution_weight_type,
        match_threshold=settings.resolution_match_threshold,
        auto_threshold=settings.resolution_auto_threshold,
        ambiguity_threshold=settings.resolution_ambiguity_threshold,
        max_candidates_per_key=settings.resolution_max_candidates_per_key,
        max_candidates=settings.resolution_max_candidates)
    if settings.resolution_profile is not None:  # attribute comparisons + blocking rules
        from knotwork.resolution.profile import load_profile

        config = load_profile(settings.resolution_profile).config(config)
    return config


def resolution_sql(rt: Runtime) -> SqlResolutionStore | None:
    from knotwork.infra.sql.resolution_store import SqlResolutionStore
    from knotwork.infra.sql.store import SqlDocumentStore

    docs = rt.documents
    try:  # the store may sit behind a tracing proxy
        from knotwork.observability.tracing import unwrap

        docs = unwrap(docs)
    except ImportError:  # pragma: no cover - tracing not installed
        pass
    return SqlResolutionStore(docs) if isinstance(docs, SqlDocumentStore) else None
