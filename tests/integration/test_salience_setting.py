"""The salience pass (resolution.salience) runs after consolidation only when the tenant's
settings ask for it (``entity_salience``); off, nothing is retired."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from knotwork.core import Knotwork
from knotwork.domain.models import RawDocument, SourceSystem
from knotwork.resolution import salience
from knotwork.resolution.consolidate import consolidate
from knotwork.settings import EmbedderBackend
from tests.conftest import SettingsFactory

pytestmark = [pytest.mark.integration]

WHEN = datetime(2024, 5, 1, tzinfo=UTC)


def _doc(i: int) -> RawDocument:
    return RawDocument(source_system=SourceSystem.FILE, source_id=f"n{i}.md", title=f"Notes {i}",
                       content=f"Mira Olsen leads the Harbor team. Item {i} was reviewed.",
                       created_at=WHEN, modified_at=WHEN)


@pytest.mark.parametrize("on", [False, True])
def test_the_salience_pass_runs_only_when_enabled(make_settings: SettingsFactory,
                                                  monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    calls: list[str] = []

    def counted(rt: object, group_id: str, *args: object) -> int:
        calls.append(group_id)
        return 0

    monkeypatch.setattr(salience, "retire_passing", counted)
    settings = make_settings(embedder=EmbedderBackend.HASHING, entity_salience=on)
    with Knotwork(settings) as kw:
        kw.ingest_documents([_doc(i) for i in range(3)])
        calls.clear()
        report = consolidate(kw.runtime, settings.group)
        assert calls == ([settings.group] if on else [])
        assert report.retired == 0
        assert any(e.name == "Mira Olsen" for e in kw.runtime.graph.list_entities(settings.group))
