"""Knotwork: enterprise GraphRAG with an entity-resolved, bi-temporal knowledge graph.

``from knotwork import Knotwork, Settings`` — imported lazily, so importing the package
loads no models and opens no connections.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knotwork.infra.embeddings.threads import passive_omp_wait

# before anything loads torch: its OpenMP threads sleep between ops instead of spinning
passive_omp_wait()

__all__ = ["Knotwork", "Settings"]
__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover
    from knotwork.core import Knotwork
    from knotwork.settings import Settings


def __getattr__(name: str) -> object:
    if name == "Knotwork":
        from knotwork.core import Knotwork

        return Knotwork
    if name == "Settings":
        from knotwork.settings import Settings

        return Settings
    raise AttributeError(f"module 'knotwork' has no attribute {name!r}")
