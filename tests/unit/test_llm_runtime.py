"""The runtime builds an LLM client (and the LLM users pick it up) only when configured."""

from __future__ import annotations

from knotwork.communities.llm_summaries import LLMCommunitySummarizer
from knotwork.communities.service import CommunityService
from knotwork.communities.summaries import ExtractiveSummarizer
from knotwork.infra.llm.fake import FakeLLMClient
from knotwork.infra.llm.openai_compat import OpenAICompatClient
from knotwork.ingestion.extraction.llm_extractor import LLMExtractor, llm_votes
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
