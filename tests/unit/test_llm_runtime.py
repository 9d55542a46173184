"""The runtime builds an LLM client (and the LLM users pick it up) only when configured."""

from __future__ import annotations

import json

import pytest

from knotwork.communities.llm_summaries import LLMCommunitySummarizer
from knotwork.communities.service import CommunityService
from knotwork.communities.summaries import ExtractiveSummarizer
from knotwork.infra.llm.fake import FakeLLMClient
from knotwork.infra.llm.openai_compat import OpenAICompatClient
from knotwork.ingestion.extraction.llm_extractor import (
    LLMExtractor,
    LLMVotingExtractor,
    llm_votes,
)
from knotwork.runtime import Runtime
from knotwork.settings import Settings


class _Store:
    """The LLM parts never touch the stores; closing them is all the runtime does here."""

    def close(self) -> None:
        pass


def _runtime(settings: Settings, **fields: object) -> Runtime:
    return Runtime(settings, _Store(), _Store(), _Store(), None, **fields)  # type: ignore[arg-type]


def test_no_base_url_means_no_llm_and_extractive_reports() -> None:
    rt = _runtime(Settings())
    assert rt.llm is None and rt.llm_extractor is None
    assert isinstance(CommunityService(rt, "g")._summarizer, ExtractiveSummarizer)
    assert llm_votes(rt.llm_extractor, ["text"]) is None


def test_base_url_builds_the_client_lazily_with_the_settings() -> None:
    rt = _runtime(Settings(llm_base_url="http://127.0.0.1:9/v1", llm_batch_size=3,
                           llm_model="m"))
    assert rt._llm is None  # nothing built before first use
    client = rt.llm
    assert isinstance(client, OpenAICompatClient) and client.model == "m"
    assert rt.llm is client  # built once
    extractor = rt.llm_extractor
    assert isinstance(extractor, LLMExtractor) and rt.llm_extractor is extractor
    assert extractor.batches(["a"] * 7) == [[0, 1, 2], [3, 4, 5], [6]]
    rt.close()


def test_configured_llm_reaches_community_reports_and_votes() -> None:
    fake = FakeLLMClient()
    rt = _runtime(Settings(llm_base_url="http://unused/v1"), _llm=fake, _llm_built=True)
    assert isinstance(CommunityService(rt, "g")._summarizer, LLMCommunitySummarizer)
    fake.add('{"chunks": [{"chunk": 1, "entities": [{"name": "Atlas", "type": "PRODUCT"}], '
             '"relations": []}]}', "not JSON")
    extractor = LLMExtractor(fake, batch_size=1)
    votes = llm_votes(extractor, ["Atlas ships in May.", "Nothing."])
    assert votes is not None and votes[1] is None  # the failed chunk casts no vote
    assert votes[0] is not None and [v.name for v in votes[0].entities] == ["Atlas"]
    rt.close()
    assert fake.closed


def test_ingestion_extractor_carries_the_llm_votes(monkeypatch: pytest.MonkeyPatch) -> None:
    from knotwork.ingestion.extraction import extractor as extractor_module
    from knotwork.ingestion.extraction.extractor import EnsembleExtractor

    monkeypatch.setattr(extractor_module, "build_extractor", lambda s: EnsembleExtractor(None))
    fake = FakeLLMClient(responder=lambda call: json.dumps({"chunks": [
        {"chunk": 1, "entities": [{"name": "Zephyrine Oduya", "type": "PERSON"},
                                  {"name": "Quillmark", "type": "PRODUCT"}],
         "relations": [{"source": "Zephyrine Oduya", "relation": "LEADS",
                        "target": "Quillmark", "sentence": "zephyrine oduya leads quillmark.",
                        "valid_from": None, "valid_until": None}]}]}))
    rt = _runtime(Settings(llm_base_url="http://unused/v1", llm_batch_size=1), _llm=fake,
                  _llm_built=True)
    extractor = rt.extractor
    assert isinstance(extractor, LLMVotingExtractor)
    texts = ["zephyrine oduya leads quillmark.", "Nothing here."]
    first, _ = extractor.extract(texts, {})
    assert len(fake.calls) == 2  # batch size 1: one call per chunk, never more
    names = {e.name.lower(): e for e in first.entities}
    assert {"zephyrine oduya", "quillmark"} <= set(names)
    assert names["quillmark"].type.value == "PRODUCT"
    assert [m.extractor for m in names["quillmark"].mentions] == ["llm"]  # the LLM's vote
    without = EnsembleExtractor(None).extract(texts[:1], {})[0]
    assert "quillmark" not in {e.name.lower() for e in without.entities}
    [leads] = first.relations
    assert leads.type.value == "LEADS"
    assert (first.entities[leads.source].name.lower(),
            first.entities[leads.target].name.lower()) == ("zephyrine oduya", "quillmark")
    assert extractor.names_in("Who is here?") == []  # delegated to the ensemble


def test_no_llm_keeps_the_plain_ensemble(monkeypatch: pytest.MonkeyPatch) -> None:
    from knotwork.ingestion.extraction import extractor as extractor_module
    from knotwork.ingestion.extraction.extractor import EnsembleExtractor

    monkeypatch.setattr(extractor_module, "build_extractor", lambda s: EnsembleExtractor(None))
    assert isinstance(_runtime(Settings()).extractor, EnsembleExtractor)
