"""LLM community reports on real stores: with an LLM configured (the scripted fake here; the
real llama.cpp server is covered by tests/contract/test_llm_client.py), ``communities build``
writes map-reduce reports, one call per community that fits the budget, citing stored facts."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

import knotwork
from knotwork.core import Knotwork
from knotwork.domain.events import COMMUNITY_TOPIC
from knotwork.infra.llm.fake import FakeCall, FakeLLMClient
from knotwork.prompts import community_report_reduce
from knotwork.settings import EmbedderBackend, Settings

pytestmark = [pytest.mark.integration, pytest.mark.models]

SAMPLE_DATA = Path(knotwork.__file__).parent / "sample_data"


def _report(call: FakeCall) -> community_report_reduce.Output:
    refs = re.findall(r"^\[(F\d+)\]", call.prompt, re.MULTILINE)
    return community_report_reduce.Output(
        title=f"LLM report over {len(refs)} facts", summary="Written by the scripted LLM.",
        key_topics=["scripted"], key_refs=refs[:2])


@pytest.fixture(scope="module")
def kw(tmp_path_factory: pytest.TempPathFactory, falkordb_url: str) -> Iterator[Knotwork]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("llm_communities"), group=f"llm_{secrets.token_hex(4)}",
        falkordb_url=falkordb_url, embedder=EmbedderBackend.HASHING, community_max_size=5,
        queue_prefix=f"kwtest:{secrets.token_hex(6)}:")
    with Knotwork(settings) as instance:
        instance.ingest_path(SAMPLE_DATA)  # no LLM while ingesting
        try:
            yield instance
        finally:
            instance.runtime.events.delete_topic(COMMUNITY_TOPIC)
            instance.runtime.graph.delete_group(settings.group)


def test_build_writes_llm_reports_with_stored_citations(kw: Knotwork) -> None:
    fake = FakeLLMClient(responder=_report)
    kw.runtime._llm, kw.runtime._llm_built = fake, True  # as if KNOTWORK_LLM_BASE_URL were set
    try:
        kw.build_communities()
    finally:
        kw.runtime._llm, kw.runtime._llm_built = None, False
    communities = kw.communities().communities()
    group = kw.settings.group
    facts = {f.id: f for f in kw.runtime.graph.list_facts(group)}
    with_facts = [c for c in communities if c.key_facts]
    assert with_facts and len(fake.calls) == len(with_facts)  # one call each: all fit
    assert all(c.output is community_report_reduce.Output for c in fake.calls)
    for community in with_facts:
        assert community.summarizer.startswith("llm-map-reduce/")
        assert community.name.startswith("LLM report over ")
        assert community.summary == "Written by the scripted LLM."
        assert 1 <= len(community.key_facts) <= 2
        assert set(community.key_facts) <= set(facts)
        cited = {e for f in community.key_facts for e in facts[f].episodes}
        assert set(community.citations) == cited


def test_ingestion_writes_llm_entity_summaries(tmp_path: Path, falkordb_url: str) -> None:
    from knotwork.prompts import entity_summary

    def responder(call: FakeCall) -> entity_summary.Output | str:
        if call.name.startswith(entity_summary.NAME):
            refs = re.findall(r"^\[(E\d+)\]", call.prompt, re.MULTILINE)
            return entity_summary.Output(summaries=[
                entity_summary.Summary(ref=r, summary=f"LLM summary {r}.") for r in refs])
        return "{}"  # other prompts (extraction votes): nothing

    settings = Settings(data_dir=tmp_path / "data", group=f"llmsum_{secrets.token_hex(4)}",  # type: ignore[arg-type]
                        falkordb_url=falkordb_url, embedder=EmbedderBackend.HASHING,
                        llm_base_url="http://fake.invalid/v1")
    with Knotwork(settings) as kw:
        fake = FakeLLMClient(responder=responder)
        kw.runtime._llm, kw.runtime._llm_built = fake, True
        kw.add_episode("Dana Whitfield leads Project Atlas. Atlas uses PostgreSQL.")
        summaries = {e.name: e.summary for e in kw.runtime.graph.list_entities(settings.group)}
    assert any(s.startswith("LLM summary E") for s in summaries.values()), summaries
    assert any(c.name.startswith(entity_summary.NAME) for c in fake.calls)
