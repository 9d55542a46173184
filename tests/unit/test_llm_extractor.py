"""LLM extraction with the scripted fake: batching, grounding, mapping, dates, failures."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import structlog

from knotwork.domain.models import EntityType, RelationType
from knotwork.domain.ports import LLMError
from knotwork.infra.llm.fake import FakeCall, FakeLLMClient
from knotwork.ingestion.extraction.llm_extractor import LLMExtractor, resolve_date

CHUNKS = [
    "Dana Whitfield leads Project Atlas since March 2024. Atlas uses PostgreSQL.",
    "The Payments team is led by Lee Okafor. Lee joined Northwind in 2021.",
    "Nothing to see here.",
    "Orbit depends on Kafka.",
    "Mina works at Globex.",
]


def _reply(*chunks: dict[str, object]) -> str:
    return json.dumps({"chunks": list(chunks)})


def test_batches_respect_size_and_token_budget() -> None:
    fake = FakeLLMClient()
    extractor = LLMExtractor(fake, batch_size=2)
    assert extractor.batches(CHUNKS) == [[0, 1], [2, 3], [4]]
    results = extractor.extract(CHUNKS)
    assert len(results) == 5 and len(fake.calls) == 3
    assert extractor.stats.calls == 3 and extractor.stats.chunks == 5
    assert extractor.stats.calls_per_chunk == 3 / 5
    # every chunk of a batch is in its prompt, numbered from 1
    assert "### Chunk 1" in fake.calls[0].prompt and CHUNKS[1] in fake.calls[0].prompt
    tight = LLMExtractor(FakeLLMClient(), batch_size=8, input_tokens=25)
    assert tight.batches(CHUNKS) == [[0], [1], [2, 3, 4]]  # 17, 20, 7+7+7 tokens


def test_entities_are_grounded_typed_and_mapped() -> None:
    fake = FakeLLMClient([_reply({"chunk": 1, "entities": [
        {"name": "Dana Whitfield", "type": "PERSON"},
        {"name": "project atlas", "type": "PRODUCT"},  # case differs from the text
        {"name": "PostgreSQL", "type": "database"},  # synonym -> TECHNOLOGY
        {"name": "Sam Altman", "type": "PERSON"},  # not in the text: invented
        {"name": "Atlas", "type": "SPACESHIP"},  # unknown type
    ], "relations": []})])
    extractor = LLMExtractor(fake, batch_size=1)
    [result] = extractor.extract(CHUNKS[:1])
    got = {e.text: e for e in result.entities}
    assert set(got) == {"Dana Whitfield", "Project Atlas", "PostgreSQL"}
    assert got["PostgreSQL"].type is EntityType.TECHNOLOGY
    assert got["PostgreSQL"].confidence < got["Dana Whitfield"].confidence  # mapped type
    for entity in result.entities:
        for start, end in entity.spans:
            assert CHUNKS[0][start:end].lower() == entity.text.lower()
    assert extractor.stats.dropped_entities == 2


def test_relations_map_reverse_fall_back_and_need_both_ends() -> None:
    fake = FakeLLMClient([_reply(
        {"chunk": 1, "entities": [{"name": "Dana Whitfield", "type": "PERSON"},
                                  {"name": "Project Atlas", "type": "PRODUCT"},
                                  {"name": "PostgreSQL", "type": "TECHNOLOGY"}],
         "relations": [
             {"source": "Dana Whitfield", "relation": "LEADS", "target": "Project Atlas",
              "sentence": "Dana Whitfield leads Project Atlas since March 2024.",
              "valid_from": "March 2024", "valid_until": "null"},
             {"source": "Project Atlas", "relation": "is built on", "target": "PostgreSQL",
              "sentence": "paraphrase the model made up", "valid_from": None,
              "valid_until": None},
             {"source": "Dana Whitfield", "relation": "WORKS_AT", "target": "Initech",
              "sentence": "", "valid_from": None, "valid_until": None}]},
        {"chunk": 2, "entities": [{"name": "Payments team", "type": "TEAM"},
                                  {"name": "Lee Okafor", "type": "PERSON"}],
         "relations": [{"source": "Payments team", "relation": "led_by",
                        "target": "Lee Okafor", "sentence": "The Payments team is led by Lee",
                        "valid_from": None, "valid_until": None}]},
    )])
    extractor = LLMExtractor(fake, batch_size=2)
    first, second = extractor.extract(CHUNKS[:2], [datetime(2024, 6, 1, tzinfo=UTC)] * 2)
    leads, related = first.relations
    assert (leads.source, leads.type, leads.target) == (
        "Dana Whitfield", RelationType.LEADS, "Project Atlas")
    assert leads.valid_from == "March 2024" and leads.valid_until is None
    assert leads.valid_at == datetime(2024, 3, 1, tzinfo=UTC) and leads.invalid_at is None
    assert CHUNKS[0][leads.start:leads.end] == leads.sentence
    # unknown label -> RELATED_TO with a low confidence; sentence found from both names
    assert related.type is RelationType.RELATED_TO and related.confidence < leads.confidence
    assert related.sentence == "Atlas uses PostgreSQL."
    assert extractor.stats.dropped_relations == 1  # Initech is no entity of the chunk
    [led] = second.relations  # passive label: direction reversed
    assert (led.source, led.type, led.target) == ("Lee Okafor", RelationType.LEADS,
                                                   "Payments team")
    votes = second.votes()
    assert {v.name for v in votes.entities} == {"Payments team", "Lee Okafor"}
    assert votes.relations[0].fact == led.sentence


def test_chunk_numbers_outside_the_batch_are_ignored() -> None:
    fake = FakeLLMClient([_reply(
        {"chunk": 7, "entities": [{"name": "Orbit", "type": "PRODUCT"}], "relations": []},
        {"chunk": 2, "entities": [{"name": "Kafka", "type": "TECHNOLOGY"}], "relations": []})])
    results = LLMExtractor(fake, batch_size=2).extract(CHUNKS[2:4])
    assert results[0].entities == ()
    assert [e.text for e in results[1].entities] == ["Kafka"]


def test_failures_give_empty_results_and_a_log_line() -> None:
    fake = FakeLLMClient([LLMError("HTTP 503 (after 3 attempts)"), "not json at all"])
    extractor = LLMExtractor(fake, batch_size=2)
    with structlog.testing.capture_logs() as logs:
        results = extractor.extract(CHUNKS[:4])
    assert [r.ok for r in results] == [False] * 4
    assert all(r.entities == () and r.relations == () for r in results)
    events = [e["event"] for e in logs]
    assert "llm_extract.failed" in events and "llm_extract.dropped" in events
    assert extractor.stats.failed_calls == 2 and extractor.stats.calls == 2


def test_prompt_carries_reference_dates() -> None:
    seen: list[FakeCall] = []

    def responder(call: FakeCall) -> str:
        seen.append(call)
        return _reply()

    LLMExtractor(FakeLLMClient(responder=responder)).extract(
        CHUNKS[:1], [datetime(2025, 2, 3, tzinfo=UTC)])
    assert "(written 2025-02-03)" in seen[0].prompt


def test_resolve_date() -> None:
    ref = datetime(2024, 6, 15, tzinfo=UTC)
    assert resolve_date("2023-11-02", ref) == datetime(2023, 11, 2, tzinfo=UTC)
    assert resolve_date("since May", ref) == datetime(2024, 5, 1, tzinfo=UTC)
    assert resolve_date("next sprint-ish", ref) is None
    assert resolve_date("March 2024", None) is None
