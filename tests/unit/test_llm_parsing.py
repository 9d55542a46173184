"""Output schema strictness and JSON repair shared by every LLM adapter."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from knotwork.infra.llm.factory import create_llm_client
from knotwork.infra.llm.fake import FakeLLMClient, minimal_instance
from knotwork.infra.llm.parsing import output_schema, parse_output
from knotwork.prompts.base import capped_list, capped_text
from knotwork.settings import Settings


class Person(BaseModel):
    name: str
    title: str = ""  # a field called "title" must survive the keyword clean-up


class Team(BaseModel):
    title: capped_text(50)
    people: capped_list(Person, 3) = Field(default_factory=list)
    lead: Person | None = None


def test_schema_is_strict_inlined_and_bounded() -> None:
    schema = output_schema(Team)
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text
    assert schema["required"] == ["title", "people", "lead"]
    assert schema["additionalProperties"] is False
    people = schema["properties"]["people"]
    assert people["maxItems"] == 3
    assert people["items"]["required"] == ["name", "title"]
    assert people["items"]["additionalProperties"] is False
    assert "maxLength" not in text  # llama.cpp grammars explode on it; cut on parsing instead
    assert "title" in people["items"]["properties"]  # the field, not the dropped keyword


def test_clean_json_parses_without_repair() -> None:
    parsed = parse_output('{"title": "Core", "people": [{"name": "Ann"}], "lead": null}', Team)
    assert parsed.value is not None and not parsed.repaired
    assert parsed.value.people[0].name == "Ann"


def test_fences_trailing_text_and_trailing_commas_are_repaired() -> None:
    text = 'Here you go:\n```json\n{"title": "Core", "people": [{"name": "Ann"},],}\n```\nBye!'
    parsed = parse_output(text, Team)
    assert parsed.value is not None and parsed.repaired
    assert [p.name for p in parsed.value.people] == ["Ann"]


def test_truncated_output_is_closed() -> None:
    parsed = parse_output('{"title": "Core", "people": [{"name": "Ann"}, {"name": "Bo', Team)
    assert parsed.value is not None
    assert [p.name for p in parsed.value.people] == ["Ann", "Bo"]


def test_overlong_output_is_cut_not_rejected() -> None:
    data = {"title": "x" * 80, "people": [{"name": str(i)} for i in range(7)], "lead": None}
    parsed = parse_output(json.dumps(data), Team)
    assert parsed.value is not None
    assert len(parsed.value.title) == 50 and len(parsed.value.people) == 3


def test_invalid_output_is_reported_not_raised() -> None:
    assert parse_output("I cannot help with that.", Team).error == "no JSON object in the output"
    bad = parse_output('{"people": "nobody"}', Team)
    assert bad.value is None and bad.error is not None and bad.error.startswith("schema:")


def test_minimal_instance_is_valid_for_the_schema() -> None:
    Team.model_validate(minimal_instance(output_schema(Team)))


def test_fake_records_calls_and_counts_dropped_and_repaired() -> None:
    fake = FakeLLMClient(['```{"title": "A",}```', "no json", Team(title="B")])
    from knotwork.prompts.base import user

    first = fake.complete([user("q1")], Team, name="p/1")
    second = fake.complete([user("q2")], Team, name="p/1")
    third = fake.complete([user("q3")], Team, name="p/1")
    assert first.value is not None and first.value.title == "A" and first.repaired
    assert second.value is None and second.error
    assert third.value is not None and third.value.title == "B"
    assert [c.prompt for c in fake.calls] == ["q1", "q2", "q3"]
    stats = fake.stats
    assert (stats.calls, stats.repaired, stats.dropped) == (3, 1, 1)
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0


def test_factory_builds_a_client_only_with_a_base_url() -> None:
    assert create_llm_client(Settings()) is None
    client = create_llm_client(Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="m"))
    assert client is not None and client.model == "m"
    client.close()
