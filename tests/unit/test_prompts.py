"""Every prompt module: versioned, typed, renders its input, bounded output schema."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel

from knotwork.domain.ports import ChatRole
from knotwork.infra.llm.parsing import output_schema
from knotwork.prompts import (
    community_report_map,
    community_report_reduce,
    decompose_question,
    entity_summary,
    extract_graph,
)

SAMPLES: list[tuple[ModuleType, BaseModel, list[str]]] = [
    (extract_graph, extract_graph.Input(chunks=[
        extract_graph.ChunkText(index=1, text="Dana leads Atlas.", reference_date="2024-05-01"),
        extract_graph.ChunkText(index=2, text="Lee joined Globex.")]),
     ["### Chunk 1 (written 2024-05-01)", "Dana leads Atlas.", "### Chunk 2", "LEADS", "PERSON"]),
    (community_report_map, community_report_map.Input(central_entities=["Atlas"], facts=[
        community_report_map.NumberedFact(ref="F1", text="Dana leads Atlas.")]),
     ["Central entities: Atlas", "[F1] Dana leads Atlas."]),
    (community_report_reduce, community_report_reduce.Input(
        level=1, member_count=4, central=[community_report_reduce.Member(name="Atlas",
                                                                          type="PRODUCT")],
        children=["Atlas team"], notes=[community_report_reduce.Note(ref="P1", text="Partial.")]),
     ["Level 1 community with 4 entities.", "Atlas (PRODUCT)", "Sub-communities: Atlas team",
      "[P1] Partial."]),
    (entity_summary, entity_summary.Input(entities=[entity_summary.Subject(
        ref="E1", name="Dana", type="PERSON", facts=["Dana leads Atlas."],
        previous_summary="Dana is an engineer.")]),
     ["[E1] Dana (PERSON)", "Previous summary: Dana is an engineer.", "- Dana leads Atlas."]),
    (decompose_question, decompose_question.Input(question="Who manages the lead of Atlas?",
                                                  known_entities=["Atlas"]),
     ["Who manages the lead of Atlas?", "Entities named in it: Atlas"]),
]


def _arrays(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "array":
            found.append(node)
        for value in node.values():
            found += _arrays(value)
    elif isinstance(node, list):
        for value in node:
            found += _arrays(value)
    return found


@pytest.mark.parametrize(("module", "data", "expected"), SAMPLES, ids=lambda v: getattr(
    v, "NAME", ""))
def test_prompt_module(module: ModuleType, data: BaseModel, expected: list[str]) -> None:
    assert module.NAME == module.__name__.rsplit(".", 1)[1] and module.VERSION
    messages = module.render(data)
    assert [m.role for m in messages] == [ChatRole.SYSTEM, ChatRole.USER]
    text = "\n".join(m.content for m in messages)
    for piece in expected:
        assert piece in text
    schema = output_schema(module.Output)
    arrays = _arrays(schema)
    assert arrays and all("maxItems" in a for a in arrays)  # small models loop without it
    json.dumps(schema)


def test_extract_graph_schema_lists_the_taxonomy() -> None:
    schema = output_schema(extract_graph.Output)
    chunk = schema["properties"]["chunks"]["items"]["properties"]
    entity_type = chunk["entities"]["items"]["properties"]["type"]
    relation = chunk["relations"]["items"]["properties"]["relation"]
    assert "TECHNOLOGY" in entity_type["enum"] and "RELATED_TO" in relation["enum"]
