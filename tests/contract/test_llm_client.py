"""Contract of the LLM port, against the shipped fake AND a real llama.cpp server.

The real server is ``python -m llama_cpp.server`` with SmolLM2-135M-Instruct (a weak model):
these tests check plumbing (schema enforcement, usage, batching, map-reduce wiring), never
quality. Retries, timeouts and repair of the OpenAI-compatible adapter are driven by a local
scripted HTTP server, which also proxies to the real one. ``stream`` (free text, SSE) is
covered the same way: plumbing on both adapters, retries and cut streams on the scripted one.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import pytest
import structlog
from pydantic import BaseModel, Field

from knotwork.communities.llm_summaries import LLMCommunitySummarizer
from knotwork.communities.projection import EntityView, FactView
from knotwork.communities.summaries import SummaryInput
from knotwork.domain.ports import ChatMessage, LLMClient, LLMError
from knotwork.infra.llm.fake import FakeLLMClient
from knotwork.infra.llm.openai_compat import OpenAICompatClient
from knotwork.ingestion.extraction.llm_extractor import LLMExtractor
from knotwork.prompts import (
    answer_question,
    community_report_map,
    community_report_reduce,
    decompose_question,
    entity_summary,
    extract_graph,
)
from knotwork.prompts.base import capped_list, capped_text, system, user
from knotwork.settings import LLMJsonMode
from tests.support.llm_servers import ScriptedServer, Step

# ``llama_base_url`` (the real server, once per session) is in tests/conftest.py

COLOURS = ["red", "green", "blue"]


class Pick(BaseModel):
    colour: str = Field(json_schema_extra={"enum": COLOURS})
    count: int
    tags: capped_list(capped_text(20), 3) = Field(default_factory=list)


ASK = [system("You answer with JSON only."),
       user("Pick a colour from red, green, blue and a count from 1 to 9. Add up to 3 tags.")]


def _real_client(base: str, **options: object) -> OpenAICompatClient:
    values: dict[str, object] = {"model": "smollm2", "timeout_s": 180.0, "max_tokens": 200,
                                 "max_retries": 1}
    values.update(options)
    return OpenAICompatClient(base, **values)  # type: ignore[arg-type]


@pytest.fixture(params=["fake", "llama"])
def llm(request: pytest.FixtureRequest) -> Iterator[LLMClient]:
    if request.param == "fake":
        yield FakeLLMClient()
        return
    client = _real_client(request.getfixturevalue("llama_base_url"))
    try:
        yield client
    finally:
        client.close()


# --------------------------------------------------------------------------- both adapters


def test_output_parses_into_the_schema_with_usage(llm: LLMClient) -> None:
    assert isinstance(llm, LLMClient)
    result = llm.complete(ASK, Pick, name="contract/pick")
    assert isinstance(result.value, Pick)
    assert result.value.colour in COLOURS  # the enum is enforced, not just requested
    assert len(result.value.tags) <= 3
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    stats = llm.stats
    assert stats.calls == 1 and stats.requests >= 1 and stats.dropped == 0
    assert stats.prompt_tokens == result.usage.prompt_tokens


@pytest.mark.parametrize("prompt", [
    (extract_graph, extract_graph.Input(chunks=[extract_graph.ChunkText(
        index=1, text="Dana Whitfield leads Project Atlas at Northwind since March 2024.")])),
    (community_report_map, community_report_map.Input(central_entities=["Atlas"], facts=[
        community_report_map.NumberedFact(ref="F1", text="Dana leads Atlas."),
        community_report_map.NumberedFact(ref="F2", text="Atlas uses PostgreSQL.")])),
    (community_report_reduce, community_report_reduce.Input(member_count=2, notes=[
        community_report_reduce.Note(ref="F1", text="Dana leads Atlas.")])),
    (entity_summary, entity_summary.Input(entities=[entity_summary.Subject(
        ref="E1", name="Dana", type="PERSON", facts=["Dana leads Atlas."])])),
    (decompose_question, decompose_question.Input(question="Who manages the lead of Atlas?")),
], ids=lambda p: p[0].NAME)
def test_every_prompt_yields_its_typed_output(llm: LLMClient, prompt: tuple[object, BaseModel]
                                              ) -> None:
    module, data = prompt
    result = llm.complete(module.render(data), module.Output,  # type: ignore[attr-defined]
                          name=f"{module.NAME}/{module.VERSION}")  # type: ignore[attr-defined]
    assert isinstance(result.value, module.Output)  # type: ignore[attr-defined]


def test_batched_extraction_is_one_call_per_batch_and_grounded(llm: LLMClient) -> None:
    chunks = ["Dana Whitfield leads Project Atlas.", "Lee Okafor works at Northwind.",
              "Atlas uses PostgreSQL."]
    extractor = LLMExtractor(llm, batch_size=2, max_tokens=300)
    results = extractor.extract(chunks)
    assert len(results) == 3
    assert llm.stats.calls == 2 and extractor.stats.calls_per_chunk <= 1.0
    for text, result in zip(chunks, results, strict=True):
        names = {e.text for e in result.entities}
        for entity in result.entities:  # whatever the model said, only text-grounded names
            assert all(text[s:e].lower() == entity.text.lower() for s, e in entity.spans)
        for relation in result.relations:
            assert {relation.source, relation.target} <= names
            assert relation.sentence in text


def test_community_report_map_reduce_plumbing(llm: LLMClient) -> None:
    members = [EntityView(f"e{i}", name, kind) for i, (name, kind) in enumerate(
        [("Dana Whitfield", "PERSON"), ("Project Atlas", "PRODUCT"), ("PostgreSQL", "TECHNOLOGY"),
         ("Lee Okafor", "PERSON")])]
    facts = [FactView("f0", "e0", "e1", "LEADS", "Dana Whitfield leads Project Atlas.", 0.9,
                      ("ep0",)),
             FactView("f1", "e1", "e2", "USES", "Project Atlas uses PostgreSQL.", 0.9, ("ep1",)),
             FactView("f2", "e3", "e1", "DEVELOPED", "Lee Okafor develops Project Atlas.", 0.9,
                      ("ep2",))]
    item = SummaryInput(level=0, members=members, central=["e1", "e0"],
                        centrality={"e0": 0.3, "e1": 0.4, "e2": 0.15, "e3": 0.15}, facts=facts)
    summarizer = LLMCommunitySummarizer(llm, input_tokens=240, max_tokens=300)
    report = summarizer.summarize(item)
    assert summarizer.fallbacks == 0
    assert summarizer.calls >= 2  # over the budget: at least one map and the reduce
    assert report.title and report.summary
    assert set(report.key_facts) <= {"f0", "f1", "f2"} and report.key_facts
    assert set(report.citations) <= {"ep0", "ep1", "ep2"} and report.citations


STORY = [system("You are a helpful assistant."),
         user("Write two short sentences about the sea.")]


def test_stream_yields_text_deltas_and_counts_the_call(llm: LLMClient) -> None:
    deltas = llm.stream(STORY, name="contract/stream", max_tokens=40)
    assert llm.stats.calls == 0  # lazy: nothing is sent before the first next()
    received = list(deltas)
    assert len(received) > 1 and all(isinstance(d, str) and d for d in received)
    assert "".join(received).strip()
    stats = llm.stats
    assert stats.calls == 1 and stats.requests >= 1 and stats.failures == 0
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0 and stats.dropped == 0


def test_an_abandoned_stream_is_closed_and_counted(llm: LLMClient) -> None:
    deltas = llm.stream(STORY, name="contract/stream", max_tokens=40)
    first = next(iter(deltas))
    assert first
    deltas.close()  # type: ignore[attr-defined]  # generators close; the connection with them
    assert llm.stats.calls == 1 and llm.stats.failures == 0
    again = "".join(llm.stream(STORY, name="contract/stream", max_tokens=20))
    assert again.strip() and llm.stats.calls == 2  # the client is still usable


def test_answer_prompt_streams_text_with_only_given_citations(llm: LLMClient) -> None:
    data = answer_question.Input(question="Who leads Project Atlas?", items=[
        answer_question.ContextItem(number=1, text="Dana Whitfield leads Project Atlas.",
                                    source="Atlas kickoff", date="2024-03-01"),
        answer_question.ContextItem(number=2, text="Project Atlas uses PostgreSQL.")])
    cleaner = answer_question.CitationFilter({1, 2})
    text = "".join(cleaner.feed(d) for d in llm.stream(
        answer_question.render(data), name=f"{answer_question.NAME}/{answer_question.VERSION}",
        max_tokens=80)) + cleaner.flush()
    assert text.strip() and set(cleaner.cited) <= {1, 2}
    assert all(int(n) in (1, 2) for n in re.findall(r"\[(\d+)\]", text))


# --------------------------------------------------------------------------- the HTTP adapter

GOOD = json.dumps({"colour": "red", "count": 2, "tags": []})


def _scripted(server: ScriptedServer, **options: object) -> OpenAICompatClient:
    values: dict[str, object] = {"timeout_s": 5.0, "max_retries": 2, "backoff_base_s": 0.01,
                                 "max_backoff_s": 2.0}
    values.update(options)
    return OpenAICompatClient(server.base_url, **values)  # type: ignore[arg-type]


def test_retries_5xx_and_429_with_backoff_then_succeeds() -> None:
    steps = [Step(status=500), Step(status=429, headers={"Retry-After": "0.3"}),
             Step(content=GOOD)]
    with ScriptedServer(steps) as server:
        client = _scripted(server)
        result = client.complete(ASK, Pick)
    assert result.value == Pick(colour="red", count=2) and result.attempts == 3
    assert result.usage.prompt_tokens == 11 and result.usage.completion_tokens == 7
    assert server.times[2] - server.times[1] >= 0.29  # Retry-After honoured
    assert client.stats.retries == 2 and client.stats.requests == 3


def test_gives_up_after_bounded_retries() -> None:
    with ScriptedServer([Step(status=503)]) as server:
        client = _scripted(server, max_retries=2)
        with pytest.raises(LLMError, match="503"):
            client.complete(ASK, Pick)
    assert len(server.requests) == 3 and client.stats.failures == 1


def test_client_errors_are_not_retried() -> None:
    with ScriptedServer([Step(status=400)]) as server:
        client = _scripted(server)
        with pytest.raises(LLMError, match="400"):
            client.complete(ASK, Pick)
    assert len(server.requests) == 1


def test_timeouts_are_bounded_and_retried() -> None:
    with ScriptedServer([Step(delay_s=1.5, content=GOOD), Step(content=GOOD)]) as server:
        result = _scripted(server, timeout_s=0.3).complete(ASK, Pick)
        assert result.value is not None and result.attempts == 2
    with ScriptedServer([Step(delay_s=1.5, content=GOOD)]) as server:
        started = time.monotonic()
        with pytest.raises(LLMError, match="timeout"):
            _scripted(server, timeout_s=0.3, max_retries=1).complete(ASK, Pick)
        assert time.monotonic() - started < 1.4  # two 0.3 s attempts, not the 1.5 s replies


def test_broken_json_is_repaired_or_dropped_with_a_log_line() -> None:
    broken = "Sure!\n```json\n{'colour': 'blue', 'count': 4, 'tags': ['a',],}\n```\nDone."
    with ScriptedServer([Step(content=broken), Step(content="I refuse.")]) as server:
        client = _scripted(server)
        fixed = client.complete(ASK, Pick)
        with structlog.testing.capture_logs() as logs:
            dropped = client.complete(ASK, Pick, name="contract/pick")
    assert fixed.value == Pick(colour="blue", count=4, tags=["a"]) and fixed.repaired
    assert dropped.value is None and dropped.error
    [line] = [e for e in logs if e["event"] == "llm.output_dropped"]
    assert line["prompt"] == "contract/pick" and line["raw"] == "I refuse."
    assert (client.stats.repaired, client.stats.dropped) == (1, 1)


@pytest.mark.parametrize("mode", list(LLMJsonMode))
def test_schema_goes_on_the_wire_per_json_mode(mode: LLMJsonMode) -> None:
    with ScriptedServer([Step(content=GOOD)]) as server:
        _scripted(server, json_mode=mode, api_key="sk-test", model="m1").complete(
            [ChatMessage(role="system", content="sys"), user("u")], Pick, name="p/1",
            max_tokens=77)
    body = server.requests[0]
    assert body["model"] == "m1" and body["max_tokens"] == 77 and body["temperature"] == 0.0
    if mode is LLMJsonMode.JSON_SCHEMA:
        wire = body["response_format"]["json_schema"]  # type: ignore[index]
        assert wire["name"] == "p_1" and wire["strict"] is True
        assert wire["schema"]["properties"]["tags"]["maxItems"] == 3
    elif mode is LLMJsonMode.JSON_OBJECT:
        assert body["response_format"]["type"] == "json_object"  # type: ignore[index]
        assert body["response_format"]["schema"]["required"] == ["colour", "count", "tags"]  # type: ignore[index]
    else:
        assert "response_format" not in body
        assert '"maxItems":3' in body["messages"][0]["content"]  # type: ignore[index]
    assert server.headers[0]["authorization"] == "Bearer sk-test"


def test_json_schema_rejection_falls_back_to_json_object_mode() -> None:
    rejected = ('{"detail": [{"loc": ["body", "response_format", "type"], "input": '
                '"json_schema", "msg": "Input should be \'text\' or \'json_object\'"}]}')
    with ScriptedServer([Step(status=500, body=rejected), Step(content=GOOD)]) as server:
        client = _scripted(server, max_retries=0)
        result = client.complete(ASK, Pick)
        again = client.complete(ASK, Pick)
    assert result.value is not None and again.value is not None and result.attempts == 1
    formats = [r["response_format"]["type"] for r in server.requests]  # type: ignore[index]
    assert formats == ["json_schema", "json_object", "json_object"]  # remembered
    assert client.json_mode is LLMJsonMode.JSON_OBJECT


def test_retry_in_front_of_the_real_server(llama_base_url: str) -> None:
    with ScriptedServer([Step(status=502), Step(proxy=llama_base_url)]) as server:
        client = _scripted(server, timeout_s=180.0, max_tokens=120, model="smollm2")
        result = client.complete(ASK, Pick)
    assert isinstance(result.value, Pick) and result.value.colour in COLOURS
    assert result.attempts == 2 and result.usage.completion_tokens > 0


def test_stream_parses_sse_chunks_with_usage() -> None:
    with ScriptedServer([Step(stream=["Dana ", "leads ", "Atlas [1]."])]) as server:
        client = _scripted(server, model="m1")
        deltas = list(client.stream(ASK, name="p/1", max_tokens=50, temperature=0.3))
    assert deltas == ["Dana ", "leads ", "Atlas [1]."]
    body = server.requests[0]
    assert body["stream"] is True and body["model"] == "m1" and body["max_tokens"] == 50
    assert body["temperature"] == 0.3 and "response_format" not in body
    stats = client.stats
    assert (stats.calls, stats.requests, stats.prompt_tokens, stats.completion_tokens) == \
        (1, 1, 11, 3)  # the usage chunk's numbers


def test_stream_retries_until_the_first_delta() -> None:
    steps = [Step(status=503), Step(stream=["x", "y"], stream_cut_after=0),
             Step(stream=["ok ", "then"])]
    with ScriptedServer(steps) as server:
        client = _scripted(server, max_retries=2)
        assert list(client.stream(ASK)) == ["ok ", "then"]
    assert len(server.requests) == 3 and client.stats.retries == 2


def test_a_stream_cut_after_deltas_fails_without_retry() -> None:
    with ScriptedServer([Step(stream=["a ", "b ", "c"], stream_cut_after=2)]) as server:
        client = _scripted(server, max_retries=2)
        deltas = client.stream(ASK)
        received = [next(deltas), next(deltas)]
        with pytest.raises(LLMError, match="before \\[DONE\\]"):
            next(deltas)
    assert received == ["a ", "b "] and len(server.requests) == 1
    assert client.stats.failures == 1


def test_stream_client_errors_are_not_retried() -> None:
    with ScriptedServer([Step(status=400)]) as server:
        client = _scripted(server)
        with pytest.raises(LLMError, match="400"):
            list(client.stream(ASK))
    assert len(server.requests) == 1
