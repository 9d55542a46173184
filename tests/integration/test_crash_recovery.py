"""A crash between an ingest's store writes, then a plain re-ingest, equals a clean ingest (issue 18).

The crash is simulated deterministically: the second batch's write stops with an exception right
after one of its steps (the SQL PROCESSING mark, the graph, the vectors, the SQL rows, the first
COMPLETED mark), as a ``kill -9`` at that moment would leave it. Then a new process (a new
``Knotwork`` on the same data) ingests the same documents again, and its graph, vectors and SQL
rows (``bench.crash_state``) must equal those of a clean ingest into another data directory
under the same tenant name. ``bench.crash`` does the same with real ``kill -9``s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.crash_state import compare, facts_without_vectors, snapshot
from knotwork.core import Knotwork
from knotwork.domain.models import ProcessingStatus, RawDocument, SourceSystem
from knotwork.ingestion.pipeline import IngestionPipeline
from knotwork.services.reconcile import reconcile
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]

WHEN = datetime(2025, 4, 1, tzinfo=UTC)
TEAMS = ("Ledger", "Atlas", "Harbor", "Quartz")
PEOPLE = ("Ana Ruiz", "Bo Lindgren", "Chen Wei", "Dara Okoye", "Emil Novak", "Farah Aziz",
          "Gus Moreno")
PAGES = 24  # two batches (16 + 8)
GROUP = "crashcase"


class Crash(RuntimeError):
    """Stands for the process dying."""


def _pages() -> list[RawDocument]:
    pages = []
    for i in range(PAGES):
        team, lead, member = TEAMS[i % 4], PEOPLE[i % 7], PEOPLE[(i * 3 + 2) % 7]
        text = (f"{lead} leads Project P{i} for the {team} Team. {member} works on Project P{i}. "
                f"Project P{i} uses PostgreSQL and depends on Project P{(i + 1) % PAGES}. "
                f"{member} reports to {lead}.")
        pages.append(RawDocument(source_system=SourceSystem.FILE, source_id=f"p{i}.md",
                                 title=f"Project P{i}", content=text, created_at=WHEN,
                                 modified_at=WHEN))
    return pages


def _settings(data: Path) -> Settings:
    # an embedded graph server per data directory: both runs use one tenant name, so their
    # deterministic ids compare one for one
    # candidate sentence vectors on: their collection must converge too (issue 23)
    return Settings(data_dir=data, group=GROUP, embedder=EmbedderBackend.HASHING,
                    evidence_vectors=True)


# the step after which the second batch's write stops (the first batch completed)
STEPS = ("_begin", "_write_graph", "_write_vectors", "_save_sql")


@contextmanager
def _crash_after(step: str, monkeypatch: pytest.MonkeyPatch, call: int = 2) -> Iterator[None]:
    original: Callable[..., object] = getattr(IngestionPipeline, step)
    calls = {"n": 0}

    def dying(self: IngestionPipeline, *args: object, **kwargs: object) -> object:
        result = original(self, *args, **kwargs)
        calls["n"] += 1
        if calls["n"] == call:
            raise Crash(step)
        return result

    with monkeypatch.context() as patch:
        patch.setattr(IngestionPipeline, step, dying)
        yield


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    with Knotwork(_settings(tmp_path_factory.mktemp("clean"))) as kw:
        kw.ingest_documents(_pages())
        return snapshot(kw)


def _crash(data: Path, step: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with Knotwork(_settings(data)) as kw, _crash_after(step, monkeypatch), \
            pytest.raises(Crash):
        kw.ingest_documents(_pages())


@pytest.mark.parametrize("step", STEPS)
def test_reingest_after_a_crash_equals_a_clean_ingest(
        step: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        clean: dict[str, dict[str, str]]) -> None:
    _crash(tmp_path, step, monkeypatch)
    with Knotwork(_settings(tmp_path)) as kw:
        statuses = {d.processing_status for d in kw.runtime.documents.list_documents(GROUP)}
        assert ProcessingStatus.PROCESSING in statuses  # the crashed batch is marked unfinished
        kw.ingest_documents(_pages())  # the documented recovery: the same ingest again
        after = snapshot(kw)
        assert facts_without_vectors(after) == 0
        assert [d.line() for d in compare(clean, after)] == []
        assert reconcile(kw.runtime, GROUP).repaired == 0


def test_reconcile_rolls_back_what_a_crash_half_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        clean: dict[str, dict[str, str]]) -> None:
    """Without a re-ingest, ``reconcile`` withdraws the crashed batch's graph state (its
    documents stay PROCESSING, listed); an ingest afterwards still converges."""
    _crash(tmp_path, "_write_graph", monkeypatch)
    with Knotwork(_settings(tmp_path)) as kw:
        report = reconcile(kw.runtime, GROUP)
        assert report.rolled_back_episodes == PAGES - 16
        assert len(report.unfinished_documents) == PAGES - 16
        state = snapshot(kw)
        assert facts_without_vectors(state) == 0
        unfinished = {d.id for d in kw.runtime.documents.list_documents(GROUP)
                      if d.processing_status is not ProcessingStatus.COMPLETED}
        episodes = [json.loads(v)["document"] for v in state["episodes"].values()]
        assert not unfinished & set(episodes)
        again = reconcile(kw.runtime, GROUP)
        assert again.repaired == 0
        kw.ingest_documents(_pages())
        assert [d.line() for d in compare(clean, snapshot(kw))] == []


def test_a_crash_in_a_batch_that_ends_facts_redoes_to_a_clean_ingest(tmp_path: Path) -> None:
    """The generated world's second batch supersedes directory facts (managers change) and its
    entities' summaries reach the length bound: a crash after its graph write, then the same
    ingest again, equals a clean ingest (summaries too, not only facts)."""
    from bench.world.build import generate_world
    from knotwork.ingestion.loaders.detect import load_path

    generate_world(tmp_path / "world", 8, 7, 1)
    pages = load_path(tmp_path / "world" / "confluence").documents
    assert len(pages) > 16  # two batches
    with Knotwork(_settings(tmp_path / "clean")) as kw:
        kw.ingest_documents(pages)
        clean = snapshot(kw)
    original = IngestionPipeline._write_graph
    calls = {"n": 0}

    def dying(self: IngestionPipeline, *args: object, **kwargs: object) -> object:
        result = original(self, *args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 2:
            raise Crash("_write_graph")
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(IngestionPipeline, "_write_graph", dying)
        with Knotwork(_settings(tmp_path / "crashed")) as kw, pytest.raises(Crash):
            kw.ingest_documents(pages)
    with Knotwork(_settings(tmp_path / "crashed")) as kw:
        kw.ingest_documents(pages)
        assert [d.line() for d in compare(clean, snapshot(kw))] == []
